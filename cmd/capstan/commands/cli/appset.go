package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

// ApplicationSets are handled as Argo CD's API shapes them (maps, not Go
// types), so a field the API adds passes through unchanged.

func newApplicationSetCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "appset", Short: "Manage ApplicationSets"}
	cmd.AddCommand(newAppSetCreateCommand(f), newAppSetGetCommand(f), newAppSetListCommand(f), newAppSetDeleteCommand(f), newAppSetGenerateCommand(f))
	return cmd
}

// appSetPath is the API path of an ApplicationSet named name, or
// namespace/name for one outside the control namespace.
func appSetPath(name string) apiclient.Path {
	ns, short, ok := strings.Cut(name, "/")
	if !ok {
		return apiclient.PathOf("/api/v1/applicationsets/{name}", name)
	}
	return apiclient.PathOf("/api/v1/applicationsets/{name}", short).With(url.Values{"appsetNamespace": {ns}})
}

// readAppSets reads the ApplicationSets of YAML or JSON files.
func readAppSets(files []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, file := range files {
		data, err := cmdutil.ReadBounded(file)
		if err != nil {
			return nil, err
		}
		objs, err := manifest.Parse(file, data)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.GetKind() != "ApplicationSet" {
				return nil, fmt.Errorf("%s: %s %s is not an ApplicationSet", file, o.GetKind(), o.GetName())
			}
			out = append(out, o)
		}
	}
	return out, nil
}

func newAppSetCreateCommand(f *clientFlags) *cobra.Command {
	var upsert, dryRun, wait bool
	var output, namespace string
	cmd := &cobra.Command{
		Use:     "create FILE...",
		Short:   "Create ApplicationSets from files",
		Example: "  capstan appset create appset.yaml\n  capstan appset create --upsert --dry-run -o yaml appset.yaml",
		Args:    cobra.MinimumNArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			sets, err := readAppSets(args)
			if err != nil {
				return err
			}
			for _, set := range sets {
				inNamespace(cmd, set, namespace)
				var created map[string]any
				q := url.Values{"upsert": {fmt.Sprint(upsert)}, "dryRun": {fmt.Sprint(dryRun)}}
				if err := c.Do(cmd.Context(), "POST", apiclient.Path("/api/v1/applicationsets").With(q), set.Object, &created); err != nil {
					return fmt.Errorf("creating ApplicationSet %s: %w", set.GetName(), err)
				}
				if output != "wide" {
					if err := cmdutil.PrintObject(cmd.OutOrStdout(), created, output); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ApplicationSet '%s' created%s\n", set.GetName(), map[bool]string{true: " (dry run)", false: ""}[dryRun])
				if wait && !dryRun {
					if err := waitAppSet(cmd.Context(), c, qualified(set.GetName(), set.GetNamespace()), appSetUpToDate); err != nil {
						return err
					}
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace an existing ApplicationSet with a different spec")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check without creating")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the ApplicationSet's Applications are up to date (for ever while it has errors)")
	cmd.Flags().StringVarP(&namespace, "appset-namespace", "N", "", "namespace of ApplicationSets whose file names none")
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

func newAppSetGetCommand(f *clientFlags) *cobra.Command {
	var output, namespace string
	var showParams bool
	cmd := &cobra.Command{
		Use:     "get APPSETNAME",
		Short:   "Show an ApplicationSet",
		Example: "  capstan appset get guestbooks\n  capstan appset get team-a/guestbooks -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			var set map[string]any
			if err := c.Do(cmd.Context(), "GET", appSetPath(qualified(args[0], namespace)), nil, &set); err != nil {
				return fmt.Errorf("getting ApplicationSet %s: %w", args[0], err)
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), set, output)
			}
			printAppSet(cmd.OutOrStdout(), &unstructured.Unstructured{Object: set}, showParams)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	cmd.Flags().BoolVar(&showParams, "show-params", false, "show the generators' parameters")
	cmd.Flags().StringVarP(&namespace, "appset-namespace", "N", "", "namespace of the ApplicationSet (a namespace/name wins)")
	return cmd
}

// printAppSet prints an ApplicationSet's summary, as Argo CD's appset get.
func printAppSet(w io.Writer, set *unstructured.Unstructured, showParams bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(set.Object, path...); return v }
	fmt.Fprintf(tw, "Name:\t%s/%s\n", set.GetNamespace(), set.GetName())
	fmt.Fprintf(tw, "Project:\t%s\n", str("spec", "template", "spec", "project"))
	fmt.Fprintf(tw, "Server:\t%s\n", str("spec", "template", "spec", "destination", "server"))
	fmt.Fprintf(tw, "Namespace:\t%s\n", str("spec", "template", "spec", "destination", "namespace"))
	fmt.Fprintf(tw, "Repo:\t%s\n", str("spec", "template", "spec", "source", "repoURL"))
	fmt.Fprintf(tw, "Path:\t%s\n", str("spec", "template", "spec", "source", "path"))
	conditions, _, _ := unstructured.NestedSlice(set.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok {
			fmt.Fprintf(tw, "Condition:\t%v: %v\n", m["type"], m["message"])
		}
	}
	if showParams {
		generators, _, _ := unstructured.NestedSlice(set.Object, "spec", "generators")
		for i, g := range generators {
			fmt.Fprintf(tw, "Generator %d:\t%v\n", i+1, g)
		}
	}
	_ = tw.Flush()
}

func newAppSetListCommand(f *clientFlags) *cobra.Command {
	var output, selector, namespace string
	var projects []string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List ApplicationSets",
		Example: "  capstan appset list\n  capstan appset list -p default -l team=web -o name",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			q := url.Values{"selector": {selector}, "projects": projects, "appsetNamespace": {namespace}}
			var list struct {
				Items []map[string]any `json:"items"`
			}
			if err := c.Do(cmd.Context(), "GET", apiclient.Path("/api/v1/applicationsets").With(q), nil, &list); err != nil {
				return fmt.Errorf("listing ApplicationSets: %w", err)
			}
			switch output {
			case "name":
				for _, s := range list.Items {
					u := unstructured.Unstructured{Object: s}
					fmt.Fprintln(cmd.OutOrStdout(), u.GetNamespace()+"/"+u.GetName())
				}
				return nil
			case "wide", "":
			default:
				return cmdutil.PrintObject(cmd.OutOrStdout(), list.Items, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPROJECT\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET")
			for _, s := range list.Items {
				u := unstructured.Unstructured{Object: s}
				str := func(path ...string) string { v, _, _ := unstructured.NestedString(s, path...); return v }
				fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\n", u.GetNamespace(), u.GetName(), str("spec", "template", "spec", "project"),
					str("spec", "syncPolicy", "applicationsSync"), "", str("spec", "template", "spec", "source", "repoURL"),
					str("spec", "template", "spec", "source", "path"), str("spec", "template", "spec", "source", "targetRevision"))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, name, json or yaml")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector")
	cmd.Flags().StringArrayVarP(&projects, "project", "p", nil, "only these projects (repeatable)")
	cmd.Flags().StringVarP(&namespace, "appset-namespace", "N", "", "only this namespace's ApplicationSets")
	return cmd
}

func newAppSetDeleteCommand(f *clientFlags) *cobra.Command {
	var yes, wait bool
	var namespace string
	cmd := &cobra.Command{
		Use:     "delete APPSETNAME...",
		Short:   "Delete ApplicationSets",
		Example: "  capstan appset delete guestbooks --yes",
		Args:    cobra.MinimumNArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			for _, name := range args {
				name = qualified(name, namespace)
				if !f.confirm(cmd, yes, fmt.Sprintf("Are you sure you want to delete '%s' and all its Applications? [y/n] ", name)) {
					fmt.Fprintf(cmd.OutOrStdout(), "The command to delete '%s' was cancelled.\n", name)
					continue
				}
				if err := c.Do(cmd.Context(), "DELETE", appSetPath(name), nil, nil); err != nil {
					return fmt.Errorf("deleting ApplicationSet %s: %w", name, err)
				}
				if wait {
					if err := waitAppSet(cmd.Context(), c, name, appSetGone); err != nil {
						return err
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ApplicationSet '%s' deleted\n", name)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until each ApplicationSet is gone (its finalizers done)")
	cmd.Flags().StringVarP(&namespace, "appset-namespace", "N", "", "namespace of the ApplicationSets (a namespace/name wins)")
	return cmd
}

func newAppSetGenerateCommand(f *clientFlags) *cobra.Command {
	var output, namespace string
	cmd := &cobra.Command{
		Use:     "generate FILE",
		Short:   "Print the Applications an ApplicationSet would make, without creating them",
		Example: "  capstan appset generate appset.yaml -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			sets, err := readAppSets(args)
			if err != nil {
				return err
			}
			if len(sets) != 1 {
				return fmt.Errorf("%s holds %d ApplicationSets, not one", args[0], len(sets))
			}
			inNamespace(cmd, sets[0], namespace)
			var resp struct {
				Applications []map[string]any `json:"applications"`
			}
			if err := c.Do(cmd.Context(), "POST", "/api/v1/applicationsets/generate", map[string]any{"applicationSet": sets[0].Object}, &resp); err != nil {
				return fmt.Errorf("generating the Applications of %s: %w", sets[0].GetName(), err)
			}
			if output == "wide" {
				for _, a := range resp.Applications {
					u := unstructured.Unstructured{Object: a}
					fmt.Fprintln(cmd.OutOrStdout(), u.GetName())
				}
				return nil
			}
			return cmdutil.PrintObject(cmd.OutOrStdout(), resp.Applications, output)
		}),
	}
	cmd.Flags().StringVarP(&namespace, "appset-namespace", "N", "", "namespace to generate in when the file names none")
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	return cmd
}

// inNamespace puts an ApplicationSet whose file names no namespace in
// namespace (--appset-namespace), saying so, as Argo CD's CLI does.
func inNamespace(cmd *cobra.Command, set *unstructured.Unstructured, namespace string) {
	if namespace != "" && set.GetNamespace() == "" {
		fmt.Fprintf(cmd.OutOrStdout(), "ApplicationSet YAML file does not have namespace; using --appset-namespace=%q.\n", namespace)
		set.SetNamespace(namespace)
	}
}

// appSetPoll is how often --wait looks at an ApplicationSet.
const appSetPoll = time.Second

// waitAppSet polls the ApplicationSet until done says it is (nil: it no
// longer exists) or ctx ends.
func waitAppSet(ctx context.Context, c *apiclient.Client, name string, done func(set map[string]any, err error) (bool, error)) error {
	for {
		var set map[string]any
		err := c.Do(ctx, "GET", appSetPath(name), nil, &set)
		if ok, err := done(set, err); ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for ApplicationSet %s: %w", name, ctx.Err())
		case <-time.After(appSetPoll):
		}
	}
}

// appSetGone is done once the API says the ApplicationSet does not exist.
func appSetGone(_ map[string]any, err error) (bool, error) {
	var e *apiclient.Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		return true, nil
	}
	return false, nil
}

// appSetUpToDate is done once the ApplicationSet reports its Applications
// up to date (the ResourcesUpToDate condition), and fails if it is gone.
func appSetUpToDate(set map[string]any, err error) (bool, error) {
	if gone, _ := appSetGone(set, err); gone {
		return false, errors.New("the ApplicationSet was deleted before its Applications were up to date")
	}
	conds, _, _ := unstructured.NestedSlice(set, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == string(v1alpha1.ApplicationSetConditionResourcesUpToDate) && m["status"] == "True" {
			return true, nil
		}
	}
	return false, nil
}
