package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/appstate"
)

func newAppCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Manage Applications through the API server"}
	cmd.AddCommand(newAppListCommand(f), newAppGetCommand(f), newAppCreateCommand(f), newAppSetCommand(f), newAppUnsetCommand(f),
		newAppSyncCommand(f), newAppWaitCommand(f), newAppDiffCommand(f), newAppHistoryCommand(f), newAppRollbackCommand(f),
		withAppNamespace(newAppManifestsCommand(f)), withAppNamespace(newAppResourcesCommand(f)), withAppNamespace(newAppTerminateOpCommand(f)),
		newAppDeleteCommand(f), withAppNamespace(newAppLogsCommand(f)), newAppActionsCommand(f), withAppNamespace(newAppPatchResourceCommand(f)),
		withAppNamespace(newAppDeleteResourceCommand(f)), withAppNamespace(newAppGetResourceCommand(f)),
		newAppPatchCommand(f), newAppEditCommand(f), newAppConfirmDeletionCommand(f), newAppRemoveSourceCommand(f), newAppAddSourceCommand(f))
	return cmd
}

// withAppNamespace gives a command whose first argument is an Application
// name Argo CD's --app-namespace (-N): the name is then taken in that
// namespace, as "namespace/name" is.
func withAppNamespace(cmd *cobra.Command) *cobra.Command {
	var ns string
	cmd.Flags().StringVarP(&ns, "app-namespace", "N", "", "namespace of the Application")
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			args = slices.Clone(args)
			args[0] = qualified(args[0], ns)
		}
		return run(cmd, args)
	}
	return cmd
}

// appPath is the API path of an Application named name, or
// namespace/name for one outside the control namespace, followed by sub
// (a fixed sub-route such as "/sync", or none).
func appPath(name, sub string) apiclient.Path {
	ns, short, qualified := strings.Cut(name, "/")
	if !qualified {
		return apiclient.PathOf("/api/v1/applications/{name}"+sub, name)
	}
	return apiclient.PathOf("/api/v1/applications/{name}"+sub, short).With(url.Values{"appNamespace": {ns}})
}

// qualified names an Application as namespace/name when a namespace is
// given (-N) and the name has none, as Argo CD's CLI takes either.
func qualified(name, namespace string) string {
	if namespace == "" || strings.Contains(name, "/") {
		return name
	}
	return namespace + "/" + name
}

// getApp reads one Application.
func getApp(ctx context.Context, c *apiclient.Client, name string) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := c.Do(ctx, "GET", appPath(name, ""), nil, app); err != nil {
		return nil, fmt.Errorf("getting application %s: %w", name, err)
	}
	return app, nil
}

func newAppListCommand(f *clientFlags) *cobra.Command {
	var output, selector, appNamespace, cluster, repoURL, path string
	var projects []string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the Applications you may see",
		Example: "  capstan app list\n  capstan app list -p default -l team=web -o name\n  capstan app list -c in-cluster -r https://github.com/org/apps.git",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			q := url.Values{"selector": {selector}, "projects": projects, "appNamespace": {appNamespace}, "repo": {repoURL}}
			var apps v1alpha1.ApplicationList
			if err := c.Do(cmd.Context(), "GET", apiclient.Path("/api/v1/applications").With(q), nil, &apps); err != nil {
				return fmt.Errorf("listing applications: %w", err)
			}
			if cluster != "" {
				apps.Items = slices.DeleteFunc(apps.Items, func(a v1alpha1.Application) bool {
					return a.Spec.Destination.Server != cluster && a.Spec.Destination.Name != cluster
				})
			}
			if path != "" {
				apps.Items = slices.DeleteFunc(apps.Items, func(a v1alpha1.Application) bool {
					return !slices.ContainsFunc(a.Spec.GetSources(), func(src v1alpha1.ApplicationSource) bool { return src.Path == path })
				})
			}
			return printApps(cmd.OutOrStdout(), apps.Items, output)
		}),
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "wide", "output format: wide, name, json or yaml")
	fl.StringVarP(&selector, "selector", "l", "", "label selector, such as team=web")
	fl.StringArrayVarP(&projects, "project", "p", nil, "only these projects (repeatable)")
	fl.StringVarP(&appNamespace, "app-namespace", "N", "", "only the Applications of this namespace")
	fl.StringVarP(&cluster, "cluster", "c", "", "only the Applications deploying to this cluster (server URL or name)")
	fl.StringVarP(&repoURL, "repo", "r", "", "only the Applications with a source from this repository")
	fl.StringVarP(&path, "path", "P", "", "only the Applications with a source of this path in its repository")
	return cmd
}

func newAppGetCommand(f *clientFlags) *cobra.Command {
	var output, appNamespace, sourceName string
	var refresh, hardRefresh, showOperation, showParams bool
	var sourcePosition int
	var timeout uint
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one Application",
		Example: "  capstan app get guestbook\n  capstan app get guestbook -o tree\n  capstan app get guestbook --refresh -o yaml\n" +
			"  capstan app get guestbook --show-params --show-operation",
		Args: cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			name := qualified(args[0], appNamespace)
			path := appPath(name, "")
			if refresh || hardRefresh {
				// The server answers once the controller has refreshed the app.
				path = path.With(url.Values{"refresh": {map[bool]string{false: "normal", true: "hard"}[hardRefresh]}})
			}
			app := &v1alpha1.Application{}
			if err := withTimeout(timeout, func() error { return c.Do(cmd.Context(), "GET", path, nil, app) }); err != nil {
				return fmt.Errorf("getting application %s: %w", args[0], err)
			}
			var windows *syncWindowsView
			if output == "tree" || output == "wide" || output == "" {
				windows = &syncWindowsView{}
				if err := c.Do(cmd.Context(), "GET", appPath(name, "/syncwindows"), nil, windows); err != nil {
					return fmt.Errorf("reading the sync windows of %s: %w", args[0], err)
				}
			}
			out := cmd.OutOrStdout()
			switch output {
			case "tree", "wide", "":
				printAppSummary(out, app, windows)
				if showOperation && app.Status.OperationState != nil {
					fmt.Fprintln(out)
					printOperation(out, app)
				}
				if showParams {
					if err := printParams(out, app, sourceName, sourcePosition); err != nil {
						return err
					}
				}
				fmt.Fprintln(out)
				if output != "tree" {
					return printResources(out, app.Status.Resources)
				}
				var tree appstate.Tree
				if err := c.Do(cmd.Context(), "GET", appPath(name, "/resource-tree"), nil, &tree); err != nil {
					return fmt.Errorf("reading the resource tree of %s: %w", args[0], err)
				}
				return printTree(out, &tree)
			}
			return printApps(out, []v1alpha1.Application{*app}, output)
		}),
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "wide", "output format: wide, tree, name, json or yaml")
	fl.BoolVar(&refresh, "refresh", false, "compare with the latest state of Git first")
	fl.BoolVar(&hardRefresh, "hard-refresh", false, "like --refresh, also rendering anew")
	fl.StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	fl.BoolVar(&showOperation, "show-operation", false, "show the last operation's details")
	fl.BoolVar(&showParams, "show-params", false, "show the source's Helm parameters and Kustomize images")
	fl.StringVar(&sourceName, "source-name", "", "with --show-params, the source of that name")
	fl.IntVar(&sourcePosition, "source-position", -1, "with --show-params, the source at this position (from 1)")
	fl.UintVar(&timeout, "timeout", 0, "seconds to wait for a refresh (0: the API's limit)")
	return cmd
}

// withTimeout runs call, failing after seconds (0: no limit of its own).
func withTimeout(seconds uint, call func() error) error {
	if seconds == 0 {
		return call()
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Duration(seconds) * time.Second):
		return fmt.Errorf("timed out after %ds", seconds)
	}
}

// printOperation prints the last operation, as app get --show-operation
// and app sync do.
func printOperation(w io.Writer, a *v1alpha1.Application) {
	st := a.Status.OperationState
	if st == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "Operation:\tSync\n")
	if st.SyncResult != nil {
		fmt.Fprintf(tw, "Sync Revision:\t%s\n", cmp.Or(st.SyncResult.Revision, strings.Join(st.SyncResult.Revisions, ",")))
	}
	fmt.Fprintf(tw, "Phase:\t%s\n", st.Phase)
	fmt.Fprintf(tw, "Start:\t%s\n", st.StartedAt.Format(time.RFC3339))
	if st.FinishedAt != nil {
		fmt.Fprintf(tw, "Finished:\t%s\n", st.FinishedAt.Format(time.RFC3339))
		fmt.Fprintf(tw, "Duration:\t%s\n", st.FinishedAt.Sub(st.StartedAt.Time).Round(time.Second))
	}
	fmt.Fprintf(tw, "Message:\t%s\n", st.Message)
	_ = tw.Flush()
}

// printParams prints the overrides of one source: Helm parameters, or
// Kustomize images.
func printParams(w io.Writer, a *v1alpha1.Application, name string, position int) error {
	sources := a.Spec.GetSources()
	i := 0
	switch {
	case name != "":
		if i = slices.IndexFunc(sources, func(s v1alpha1.ApplicationSource) bool { return s.Name == name }); i < 0 {
			return fmt.Errorf("application %s has no source named %q", a.Name, name)
		}
	case position > 0:
		if i = position - 1; i >= len(sources) {
			return fmt.Errorf("application %s has %d sources, not %d", a.Name, len(sources), position)
		}
	}
	if len(sources) == 0 {
		return nil
	}
	src := sources[i]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw)
	if src.Helm != nil {
		fmt.Fprintln(tw, "NAME\tVALUE")
		for _, p := range src.Helm.Parameters {
			fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Value)
		}
	}
	if src.Kustomize != nil && len(src.Kustomize.Images) > 0 {
		fmt.Fprintln(tw, "IMAGE")
		for _, img := range src.Kustomize.Images {
			fmt.Fprintln(tw, img)
		}
	}
	return tw.Flush()
}

func newAppDeleteCommand(f *clientFlags) *cobra.Command {
	var cascade, yes, wait bool
	var propagation, selector, appNamespace string
	cmd := &cobra.Command{
		Use:   "delete [NAME...]",
		Short: "Delete Applications (and, with --cascade, their resources)",
		Example: "  capstan app delete guestbook\n  capstan app delete guestbook --cascade=false   # keep its resources\n" +
			"  capstan app delete -l team=web --yes --wait",
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			names, err := appNames(cmd.Context(), c, args, selector)
			if err != nil {
				return err
			}
			for _, name := range names {
				if !f.confirm(cmd, yes, fmt.Sprintf("Are you sure you want to delete '%s' and all its resources? [y/n] ", name)) {
					fmt.Fprintf(cmd.OutOrStdout(), "The command to delete '%s' was cancelled.\n", name)
					continue
				}
				q := url.Values{"cascade": {strconv.FormatBool(cascade)}, "propagationPolicy": {propagation}, "appNamespace": {appNamespace}}
				if err := c.Do(cmd.Context(), "DELETE", appPath(name, "").With(q), nil, nil); err != nil {
					return fmt.Errorf("deleting application %s: %w", name, err)
				}
				if wait {
					if err := waitGone(cmd.Context(), c, name); err != nil {
						return err
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "application '%s' deleted\n", name)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&cascade, "cascade", true, "delete the Application's resources too")
	cmd.Flags().StringVarP(&propagation, "propagation-policy", "p", "foreground", "how resources are deleted: foreground (their dependents first) or background")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation, even with --prompts-enabled")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the Application is gone")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "delete the Applications with these labels, such as team=web")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Applications")
	return cmd
}

// appNames returns the named Applications, or with a selector those it
// picks.
func appNames(ctx context.Context, c *apiclient.Client, names []string, selector string) ([]string, error) {
	if selector == "" {
		if len(names) == 0 {
			return nil, fmt.Errorf("name an Application or pass --selector")
		}
		return names, nil
	}
	var list v1alpha1.ApplicationList
	if err := c.Do(ctx, "GET", apiclient.Path("/api/v1/applications").With(url.Values{"selector": {selector}}), nil, &list); err != nil {
		return nil, fmt.Errorf("listing applications: %w", err)
	}
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	return names, nil
}

// waitGone polls until the Application no longer exists.
func waitGone(ctx context.Context, c *apiclient.Client, name string) error {
	for {
		err := c.Do(ctx, "GET", appPath(name, ""), nil, nil)
		var apiErr *apiclient.Error
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func newAppHistoryCommand(f *clientFlags) *cobra.Command {
	var output, appNamespace string
	cmd := &cobra.Command{
		Use:     "history NAME",
		Short:   "Show an Application's deployment history",
		Example: "  capstan app history guestbook",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			app, err := getApp(cmd.Context(), c, qualified(args[0], appNamespace))
			if err != nil {
				return err
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), app.Status.History, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tDATE\tREVISION")
			for _, h := range app.Status.History {
				rev := h.Revision
				if len(h.Revisions) > 0 {
					rev = strings.Join(h.Revisions, ",")
				}
				target := h.Source.TargetRevision
				if len(rev) > 7 {
					rev = rev[:7]
				}
				fmt.Fprintf(tw, "%d\t%s\t%s (%s)\n", h.ID, h.DeployedAt.Format(time.RFC3339), cmp.Or(target, "HEAD"), rev)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

func newAppRollbackCommand(f *clientFlags) *cobra.Command {
	var prune, dryRun bool
	var timeout uint
	var appNamespace, output string
	cmd := &cobra.Command{
		Use:   "rollback NAME [ID]",
		Short: "Sync an Application back to a deployment of its history (default: the one before the last)",
		Example: "  capstan app rollback guestbook        # to the previous deployment\n" +
			"  capstan app rollback guestbook 3      # to history id 3",
		Args: cobra.RangeArgs(1, 2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			name := qualified(args[0], appNamespace)
			app, err := getApp(cmd.Context(), c, name)
			if err != nil {
				return err
			}
			var id int64
			if len(args) == 2 {
				if id, err = strconv.ParseInt(args[1], 10, 64); err != nil {
					return fmt.Errorf("history id %q is not a number", args[1])
				}
			} else {
				h := app.Status.History
				if len(h) < 2 {
					return fmt.Errorf("application %s has no previous deployment to roll back to", args[0])
				}
				id = h[len(h)-2].ID
			}
			started := &v1alpha1.Application{}
			if err := c.Do(cmd.Context(), "POST", appPath(name, "/rollback"), map[string]any{"id": id, "prune": prune, "dryRun": dryRun}, started); err != nil {
				return fmt.Errorf("rolling back application %s: %w", args[0], err)
			}
			if err := waitForOperation(cmd, c, started, timeout); err != nil || output == "wide" {
				return err
			}
			done, err := getApp(cmd.Context(), c, name)
			if err != nil {
				return err
			}
			return printApps(cmd.OutOrStdout(), []v1alpha1.Application{*done}, output)
		}),
	}
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format of the result: wide, name, json or yaml")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete resources the deployment did not have")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what the rollback would do without doing it")
	cmd.Flags().UintVar(&timeout, "timeout", 0, "seconds to wait for the rollback (0: no limit)")
	return cmd
}

func newAppTerminateOpCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "terminate-op NAME",
		Short:   "Stop an Application's running sync",
		Example: "  capstan app terminate-op guestbook",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := c.Do(cmd.Context(), "DELETE", appPath(args[0], "/operation"), nil, nil); err != nil {
				return fmt.Errorf("terminating the operation of %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Application '%s' operation terminating\n", args[0])
			return nil
		}),
	}
}

func newAppManifestsCommand(f *clientFlags) *cobra.Command {
	var source string
	var targets targetFlags
	cmd := &cobra.Command{
		Use:   "manifests NAME",
		Short: "Print an Application's manifests, as rendered from Git or as live in the cluster",
		Example: "  capstan app manifests guestbook\n  capstan app manifests guestbook --source live\n  capstan app manifests guestbook --revision v1.2.0\n" +
			"  capstan app manifests guestbook --local ./guestbook --local-repo-root .",
		Args: cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			var docs []string
			switch source {
			case "git":
				var err error
				if docs, err = targets.manifests(cmd.Context(), c, args[0]); err != nil {
					return err
				}
			case "live":
				var resp struct{ Items []appstate.ResourceDiff }
				if err := c.Do(cmd.Context(), "GET", appPath(args[0], "/managed-resources"), nil, &resp); err != nil {
					return fmt.Errorf("reading the resources of %s: %w", args[0], err)
				}
				for _, d := range resp.Items {
					if d.LiveState != "" && d.LiveState != "null" {
						docs = append(docs, d.LiveState)
					}
				}
			default:
				return fmt.Errorf("--source must be git or live, not %q", source)
			}
			for _, doc := range docs {
				y, err := yaml.JSONToYAML([]byte(doc))
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "---\n%s", y)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&source, "source", "git", "git (rendered) or live (in the cluster)")
	targets.add(cmd.Flags(), "render this revision instead of the target revision")
	return cmd
}

func newAppResourcesCommand(f *clientFlags) *cobra.Command {
	var output, project string
	var orphaned bool
	cmd := &cobra.Command{
		Use:   "resources NAME",
		Short: "List an Application's resources, and the orphaned resources of its namespace when its project monitors them",
		Example: "  capstan app resources guestbook\n  capstan app resources guestbook -o tree\n" +
			"  capstan app resources guestbook --orphaned",
		Args: cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			var tree appstate.Tree
			if err := c.Do(cmd.Context(), "GET", appPath(args[0], "/resource-tree").With(url.Values{"project": {project}}), nil, &tree); err != nil {
				return fmt.Errorf("reading the resource tree of %s: %w", args[0], err)
			}
			// As in Argo CD: managed resources, then orphaned ones; only
			// the orphaned ones with --orphaned.
			if output == "tree" {
				if orphaned {
					tree.Nodes = tree.OrphanedNodes
				}
				return printTree(cmd.OutOrStdout(), &tree)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tKIND\tNAMESPACE\tNAME\tORPHANED")
			if !orphaned {
				for _, n := range tree.Nodes {
					if len(n.ParentRefs) == 0 {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tNo\n", n.Group, n.Kind, n.Namespace, n.Name)
					}
				}
			}
			for _, n := range tree.OrphanedNodes {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tYes\n", n.Group, n.Kind, n.Namespace, n.Name)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide or tree")
	cmd.Flags().StringVar(&project, "project", "", "the Application's project")
	cmd.Flags().BoolVar(&orphaned, "orphaned", false, "list only the orphaned resources")
	return cmd
}

// printApps prints Applications as Argo CD's app list does.
func printApps(w io.Writer, apps []v1alpha1.Application, output string) error {
	switch output {
	case "json", "yaml":
		if len(apps) == 1 {
			return cmdutil.PrintObject(w, apps[0], output)
		}
		return cmdutil.PrintObject(w, apps, output)
	case "name":
		for _, a := range apps {
			fmt.Fprintln(w, a.Namespace+"/"+a.Name)
		}
		return nil
	case "wide", "":
	default:
		return fmt.Errorf("unknown output format %q (want wide, name, json or yaml)", output)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLUSTER\tNAMESPACE\tPROJECT\tSTATUS\tHEALTH\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET")
	for _, a := range apps {
		var conds []string
		for _, c := range a.Status.Conditions {
			conds = append(conds, string(c.Type))
		}
		var src v1alpha1.ApplicationSource
		if a.Spec.Source != nil {
			src = *a.Spec.Source
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Namespace, a.Name,
			cmp.Or(a.Spec.Destination.Server, a.Spec.Destination.Name), a.Spec.Destination.Namespace, a.Spec.Project,
			a.Status.Sync.Status, a.Status.Health.Status, syncPolicy(&a), cmp.Or(strings.Join(conds, ","), "<none>"), src.RepoURL, src.Path, src.TargetRevision)
	}
	return tw.Flush()
}

func syncPolicy(a *v1alpha1.Application) string {
	p := a.Spec.SyncPolicy
	if !p.IsAutomatedSyncEnabled() {
		return "Manual"
	}
	if p.Automated.Prune {
		return "Auto-Prune"
	}
	return "Auto"
}

// syncWindowsView is the API's answer about the sync windows that apply
// to one Application.
type syncWindowsView struct {
	ActiveWindows, AssignedWindows []struct {
		Kind, Schedule, Duration string
		ManualSync               bool
	}
	CanSync bool
}

// status words the windows' verdict as Argo CD's app get does: syncs are
// allowed, only manual ones, or none. No view (app wait) reads as allowed.
func (v *syncWindowsView) status() string {
	if v == nil || len(v.AssignedWindows) == 0 {
		return "Sync Allowed"
	}
	activeDeny, activeAllows, allows := false, 0, 0
	for _, w := range v.ActiveWindows {
		if w.Kind == "deny" {
			activeDeny = true
		} else {
			activeAllows++
		}
	}
	for _, w := range v.AssignedWindows {
		if w.Kind == "allow" {
			allows++
		}
	}
	if activeDeny || (activeAllows == 0 && allows > 0) {
		if v.CanSync {
			return "Manual Allowed"
		}
		return "Sync Denied"
	}
	return "Sync Allowed"
}

// assigned lists the windows as kind:schedule:duration.
func (v *syncWindowsView) assigned() string {
	var out []string
	for _, w := range v.AssignedWindows {
		out = append(out, w.Kind+":"+w.Schedule+":"+w.Duration)
	}
	return strings.Join(out, ",")
}

// printAppSummary prints the header of Argo CD's app get; windows is what
// applies of the project's sync windows (nil when not read).
func printAppSummary(w io.Writer, a *v1alpha1.Application, windows *syncWindowsView) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	var src v1alpha1.ApplicationSource
	if srcs := a.Spec.GetSources(); len(srcs) == 1 {
		src = srcs[0] // with a source hydrator, its sync source
	}
	rows := [][2]string{
		{"Name:", a.Namespace + "/" + a.Name},
		{"Project:", a.Spec.Project},
		{"Server:", cmp.Or(a.Spec.Destination.Server, a.Spec.Destination.Name)},
		{"Namespace:", a.Spec.Destination.Namespace},
		{"Repo:", src.RepoURL},
		{"Target:", src.TargetRevision},
		{"Path:", src.Path},
		{"SyncWindow:", windows.status()},
		{"Sync Policy:", syncPolicy(a)},
		{"Sync Status:", fmt.Sprintf("%s to %s (%s)", a.Status.Sync.Status, cmp.Or(src.TargetRevision, "HEAD"), short(a.Status.Sync.Revision))},
		{"Health Status:", string(a.Status.Health.Status)},
	}
	if windows != nil && len(windows.AssignedWindows) > 0 {
		i := slices.IndexFunc(rows, func(r [2]string) bool { return r[0] == "SyncWindow:" })
		rows = slices.Insert(rows, i+1, [2]string{"Assigned Windows:", windows.assigned()})
	}
	if len(a.Spec.Sources) > 0 {
		rows = slices.DeleteFunc(rows, func(r [2]string) bool { return r[0] == "Repo:" || r[0] == "Target:" || r[0] == "Path:" })
		rows = append(rows, [2]string{"Sources:", fmt.Sprintf("%d", len(a.Spec.Sources))})
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	for _, c := range a.Status.Conditions {
		fmt.Fprintf(tw, "Condition:\t%s: %s\n", c.Type, c.Message)
	}
	_ = tw.Flush()
}

// short abbreviates a commit SHA.
func short(rev string) string {
	if len(rev) == 40 {
		return rev[:7]
	}
	return rev
}

// printResources prints the resource table of Argo CD's app get.
func printResources(w io.Writer, resources []v1alpha1.ResourceStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tKIND\tNAMESPACE\tNAME\tSTATUS\tHEALTH\tHOOK\tMESSAGE")
	for _, r := range resources {
		var health, msg string
		if r.Health != nil {
			health, msg = string(r.Health.Status), r.Health.Message
		}
		hook := ""
		if r.Hook {
			hook = "Hook"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Group, r.Kind, r.Namespace, r.Name, r.Status, health, hook, msg)
	}
	return tw.Flush()
}

// printTree prints a resource tree, children indented under their parents.
func printTree(w io.Writer, tree *appstate.Tree) error {
	children := map[string][]appstate.ResourceNode{}
	var roots []appstate.ResourceNode
	for _, n := range tree.Nodes {
		if len(n.ParentRefs) == 0 {
			roots = append(roots, n)
			continue
		}
		children[n.ParentRefs[0].UID] = append(children[n.ParentRefs[0].UID], n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND/NAME\tNAMESPACE\tHEALTH\tINFO")
	var walk func(n appstate.ResourceNode, prefix string)
	walk = func(n appstate.ResourceNode, prefix string) {
		health := ""
		if n.Health != nil {
			health = string(n.Health.Status)
		}
		var info []string
		for _, i := range n.Info {
			info = append(info, i.Name+"="+i.Value)
		}
		fmt.Fprintf(tw, "%s%s/%s\t%s\t%s\t%s\n", prefix, n.Kind, n.Name, n.Namespace, health, strings.Join(info, " "))
		for _, c := range children[n.UID] {
			walk(c, strings.ReplaceAll(prefix, "└─", "  ")+"└─")
		}
	}
	for _, r := range roots {
		walk(r, "")
	}
	return tw.Flush()
}
