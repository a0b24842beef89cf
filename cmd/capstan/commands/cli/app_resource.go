package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
)

// resourceFlags pick objects of an Application's tree, as Argo CD's
// resource commands do: by group, kind, namespace and name; several match
// only with --all.
type resourceFlags struct {
	group, kind, namespace, name, project string
	all                                   bool
}

func (r *resourceFlags) add(cmd *cobra.Command, nameFlag string, withAll bool) {
	cmd.Flags().StringVar(&r.group, "group", "", "group of the object")
	cmd.Flags().StringVar(&r.kind, "kind", "", "kind of the object")
	cmd.Flags().StringVar(&r.namespace, "namespace", "", "namespace of the object")
	cmd.Flags().StringVar(&r.name, nameFlag, "", "name of the object")
	if withAll {
		cmd.Flags().BoolVar(&r.all, "all", false, "act on every matching object")
	}
}

// match returns the app's managed objects the flags pick, failing on none
// and on several without --all.
func (r *resourceFlags) match(app *v1alpha1.Application) ([]v1alpha1.ResourceStatus, error) {
	var out []v1alpha1.ResourceStatus
	for _, res := range app.Status.Resources {
		if (r.group == "" || res.Group == r.group) && (r.kind == "" || res.Kind == r.kind) &&
			(r.namespace == "" || res.Namespace == r.namespace) && (r.name == "" || res.Name == r.name) {
			out = append(out, res)
		}
	}
	switch {
	case len(out) == 0:
		return nil, fmt.Errorf("no resource of application %s matches group %q, kind %q, namespace %q, name %q", app.Name, r.group, r.kind, r.namespace, r.name)
	case len(out) > 1 && !r.all:
		return nil, fmt.Errorf("%d resources of application %s match: name one with --group, --kind, --namespace and the name flag, or use --all", len(out), app.Name)
	}
	return out, nil
}

// resourceQuery is the query naming one object of the app's tree.
func resourceQuery(res v1alpha1.ResourceStatus, extra url.Values) url.Values {
	q := url.Values{"group": {res.Group}, "kind": {res.Kind}, "namespace": {res.Namespace}, "resourceName": {res.Name}, "version": {res.Version}}
	for k, v := range extra {
		q[k] = v
	}
	return q
}

// forEachResource runs do on each object the flags pick in app name.
func (r *resourceFlags) forEach(ctx context.Context, c *apiclient.Client, name string, do func(v1alpha1.ResourceStatus) error) error {
	app, err := getApp(ctx, c, name)
	if err != nil {
		return err
	}
	matched, err := r.match(app)
	if err != nil {
		return err
	}
	for _, res := range matched {
		if err := do(res); err != nil {
			return fmt.Errorf("%s/%s/%s: %w", res.Kind, res.Namespace, res.Name, err)
		}
	}
	return nil
}

func newAppPatchResourceCommand(f *clientFlags) *cobra.Command {
	r := &resourceFlags{}
	var patch, patchType string
	cmd := &cobra.Command{
		Use:     "patch-resource APPNAME",
		Short:   "Patch a live object of an Application",
		Example: "  capstan app patch-resource guestbook --kind Deployment --resource-name guestbook-ui --patch '{\"spec\":{\"replicas\":2}}' --patch-type application/merge-patch+json",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			return r.forEach(cmd.Context(), c, args[0], func(res v1alpha1.ResourceStatus) error {
				path := appPath(args[0], "/resource").With(resourceQuery(res, url.Values{"patchType": {patchType}}))
				if err := c.Do(cmd.Context(), "POST", path, patch, nil); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Resource '%s' patched\n", res.Name)
				return nil
			})
		}),
	}
	r.add(cmd, "resource-name", true)
	cmd.Flags().StringVar(&r.project, "project", "", "project of the Application")
	cmd.Flags().StringVar(&patch, "patch", "", "the patch")
	cmd.Flags().StringVar(&patchType, "patch-type", "application/json-patch+json", "application/json-patch+json, application/merge-patch+json or application/strategic-merge-patch+json")
	return cmd
}

func newAppDeleteResourceCommand(f *clientFlags) *cobra.Command {
	r := &resourceFlags{}
	var force, orphan bool
	cmd := &cobra.Command{
		Use:     "delete-resource APPNAME",
		Short:   "Delete a live object of an Application",
		Example: "  capstan app delete-resource guestbook --kind Pod --resource-name guestbook-ui-7d5f --force",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			return r.forEach(cmd.Context(), c, args[0], func(res v1alpha1.ResourceStatus) error {
				q := url.Values{"force": {strconv.FormatBool(force)}, "orphan": {strconv.FormatBool(orphan)}}
				if err := c.Do(cmd.Context(), "DELETE", appPath(args[0], "/resource").With(resourceQuery(res, q)), nil, nil); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Resource '%s' deleted\n", res.Name)
				return nil
			})
		}),
	}
	r.add(cmd, "resource-name", true)
	cmd.Flags().StringVar(&r.project, "project", "", "project of the Application")
	cmd.Flags().BoolVar(&force, "force", false, "delete at once, without waiting for finalizers of dependents")
	cmd.Flags().BoolVar(&orphan, "orphan", false, "leave the object's dependents in place")
	return cmd
}

func newAppGetResourceCommand(f *clientFlags) *cobra.Command {
	r := &resourceFlags{all: true}
	var output string
	var fields []string
	var managedFields bool
	cmd := &cobra.Command{
		Use:     "get-resource APPNAME",
		Short:   "Show live objects of an Application",
		Example: "  capstan app get-resource guestbook --kind Deployment --resource-name guestbook-ui\n  capstan app get-resource guestbook --kind Deployment --filter-fields spec.replicas",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			return r.forEach(cmd.Context(), c, args[0], func(res v1alpha1.ResourceStatus) error {
				var resp apiwire.ResourceManifest
				if err := c.Do(cmd.Context(), "GET", appPath(args[0], "/resource").With(resourceQuery(res, nil)), nil, &resp); err != nil {
					return err
				}
				obj := map[string]any{}
				if err := json.Unmarshal([]byte(resp.Manifest), &obj); err != nil {
					return err
				}
				if meta, ok := obj["metadata"].(map[string]any); ok && !managedFields {
					delete(meta, "managedFields")
				}
				if len(fields) > 0 {
					obj = pickFields(obj, fields)
				}
				if output == "yaml" || output == "" {
					fmt.Fprintln(cmd.OutOrStdout(), "---")
				}
				return cmdutil.PrintObject(cmd.OutOrStdout(), obj, output)
			})
		}),
	}
	cmd.Flags().StringVar(&r.group, "group", "", "group of the objects")
	cmd.Flags().StringVar(&r.kind, "kind", "", "kind of the objects")
	cmd.Flags().StringVar(&r.name, "resource-name", "", "name of the object")
	cmd.Flags().StringVar(&r.project, "project", "", "project of the Application")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().StringSliceVar(&fields, "filter-fields", nil, "only these fields, as dotted paths such as spec.replicas")
	cmd.Flags().BoolVar(&managedFields, "show-managed-fields", false, "keep metadata.managedFields")
	return cmd
}

// pickFields keeps the dotted paths of obj, with apiVersion, kind and
// the name.
func pickFields(obj map[string]any, paths []string) map[string]any {
	out := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		out["metadata"] = map[string]any{"name": meta["name"]}
	}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		var v any = obj
		for _, part := range parts {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[part]
		}
		if v == nil {
			continue
		}
		dst := out
		for _, part := range parts[:len(parts)-1] {
			next, ok := dst[part].(map[string]any)
			if !ok {
				next = map[string]any{}
				dst[part] = next
			}
			dst = next
		}
		dst[parts[len(parts)-1]] = v
	}
	return out
}

func newAppActionsCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "actions", Short: "List and run the resource actions of an Application's objects"}
	lr := &resourceFlags{all: true}
	var out string
	list := &cobra.Command{
		Use:     "list APPNAME",
		Short:   "List the actions of an Application's objects",
		Example: "  capstan app actions list guestbook --kind Deployment",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			type row struct {
				Group, Kind, Name, Action string
				Disabled                  bool
			}
			var rows []row
			err := lr.forEach(cmd.Context(), c, args[0], func(res v1alpha1.ResourceStatus) error {
				var resp struct {
					Actions []struct {
						Name     string `json:"name"`
						Disabled bool   `json:"disabled"`
					} `json:"actions"`
				}
				if err := c.Do(cmd.Context(), "GET", appPath(args[0], "/resource/actions").With(resourceQuery(res, nil)), nil, &resp); err != nil {
					return err
				}
				for _, a := range resp.Actions {
					rows = append(rows, row{res.Group, res.Kind, res.Name, a.Name, a.Disabled})
				}
				return nil
			})
			if err != nil {
				return err
			}
			if out != "" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), rows, out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tKIND\tNAME\tACTION\tDISABLED")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\n", r.Group, r.Kind, r.Name, r.Action, r.Disabled)
			}
			return tw.Flush()
		}),
	}
	lr.add(list, "resource-name", false)
	list.Flags().StringVarP(&out, "out", "o", "", "output format: json or yaml (default: a table)")

	rr := &resourceFlags{}
	run := &cobra.Command{
		Use:     "run APPNAME ACTION",
		Short:   "Run an action on an Application's objects",
		Example: "  capstan app actions run guestbook restart --kind Deployment\n  capstan app actions run guestbook suspend --kind CronJob --all",
		Args:    cobra.ExactArgs(2),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			return rr.forEach(cmd.Context(), c, args[0], func(res v1alpha1.ResourceStatus) error {
				body := map[string]any{"action": args[1], "group": res.Group, "kind": res.Kind, "namespace": res.Namespace, "resourceName": res.Name, "version": res.Version}
				return c.Do(cmd.Context(), "POST", appPath(args[0], "/resource/actions/v2").With(resourceQuery(res, nil)), body, nil)
			})
		}),
	}
	rr.add(run, "resource-name", true)
	cmd.AddCommand(withAppNamespace(list), withAppNamespace(run))
	return cmd
}

func newAppLogsCommand(f *clientFlags) *cobra.Command {
	r := &resourceFlags{}
	var container, filter, untilTime string
	var follow, matchCase, previous bool
	var since, tail int64
	cmd := &cobra.Command{
		Use:     "logs APPNAME",
		Short:   "Print (or follow) the logs of an Application's pods",
		Example: "  capstan app logs guestbook --kind Deployment --group apps --name guestbook-ui\n  capstan app logs guestbook --follow --filter error --tail 100",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			q := url.Values{"group": {r.group}, "kind": {r.kind}, "namespace": {r.namespace}, "resourceName": {r.name}, "container": {container},
				"follow": {strconv.FormatBool(follow)}, "previous": {strconv.FormatBool(previous)}, "filter": {filter}, "matchCase": {strconv.FormatBool(matchCase)},
				"sinceSeconds": {strconv.FormatInt(since, 10)}, "tailLines": {strconv.FormatInt(tail, 10)}, "untilTime": {untilTime}}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			var streamErr error
			err := c.Stream(ctx, appPath(args[0], "/logs").With(q), func(data []byte) bool {
				var msg struct {
					Result struct {
						Content string `json:"content"`
						Last    bool   `json:"last"`
					} `json:"result"`
					Error *struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(data, &msg); err != nil {
					streamErr = err
					return false
				}
				if msg.Error != nil {
					streamErr = fmt.Errorf("%s", msg.Error.Message)
					return false
				}
				if msg.Result.Last {
					return follow
				}
				fmt.Fprintln(cmd.OutOrStdout(), msg.Result.Content)
				return true
			})
			if err != nil {
				return fmt.Errorf("logs of %s: %w", args[0], err)
			}
			return streamErr
		}),
	}
	r.add(cmd, "name", false)
	cmd.Flags().StringVarP(&container, "container", "c", "", "container (default: the pod's first)")
	cmd.Flags().StringVar(&filter, "filter", "", "only lines containing this text (a leading ! inverts)")
	cmd.Flags().BoolVarP(&matchCase, "match-case", "m", false, "match --filter's case")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines")
	cmd.Flags().BoolVarP(&previous, "previous", "p", false, "the previous run of the container")
	cmd.Flags().Int64Var(&since, "since-seconds", 0, "only lines of the last seconds")
	cmd.Flags().Int64Var(&tail, "tail", 0, "only the last lines")
	cmd.Flags().StringVar(&untilTime, "until-time", "", "only lines until this RFC 3339 time")
	return cmd
}

func newAppPatchCommand(f *clientFlags) *cobra.Command {
	var patch, patchType, appNamespace string
	cmd := &cobra.Command{
		Use:     "patch APPNAME",
		Short:   "Patch an Application",
		Example: "  capstan app patch guestbook --patch '[{\"op\":\"replace\",\"path\":\"/spec/source/path\",\"value\":\"v2\"}]'\n  capstan app patch guestbook --type merge --patch '{\"spec\":{\"project\":\"team\"}}'",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			body := map[string]string{"name": args[0], "patch": patch, "patchType": patchType, "appNamespace": appNamespace}
			app := &v1alpha1.Application{}
			if err := c.Do(cmd.Context(), "PATCH", appPath(args[0], "").With(url.Values{"appNamespace": {appNamespace}}), body, app); err != nil {
				return fmt.Errorf("patching application %s: %w", args[0], err)
			}
			data, err := yaml.Marshal(app)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		}),
	}
	cmd.Flags().StringVar(&patch, "patch", "", "the patch")
	cmd.Flags().StringVar(&patchType, "type", "json", "json (a JSON patch) or merge")
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

func newAppEditCommand(f *clientFlags) *cobra.Command {
	var appNamespace string
	cmd := &cobra.Command{
		Use:     "edit APPNAME",
		Short:   "Edit an Application's spec in $EDITOR",
		Example: "  EDITOR=nano capstan app edit guestbook",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			app, err := getApp(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if err := editInEditor(cmd, &app.Spec); err != nil {
				return err
			}
			return putSpec(cmd.Context(), c, args[0], &app.Spec)
		}),
	}
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

// putSpec writes an Application's spec.
func putSpec(ctx context.Context, c *apiclient.Client, name string, spec *v1alpha1.ApplicationSpec) error {
	if err := c.Do(ctx, "PUT", appPath(name, "/spec"), spec, nil); err != nil {
		return fmt.Errorf("updating application %s: %w", name, err)
	}
	return nil
}

func newAppConfirmDeletionCommand(f *clientFlags) *cobra.Command {
	var appNamespace string
	cmd := &cobra.Command{
		Use:     "confirm-deletion APPNAME",
		Short:   "Approve the deletion of resources marked Delete=confirm or Prune=confirm",
		Example: "  capstan app confirm-deletion guestbook",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
				"argocd.argoproj.io/deletion-approved": time.Now().UTC().Format(time.RFC3339)}}})
			body := map[string]string{"name": args[0], "patch": string(patch), "patchType": "merge"}
			if err := c.Do(cmd.Context(), "PATCH", appPath(args[0], "").With(url.Values{"appNamespace": {appNamespace}}), body, nil); err != nil {
				return fmt.Errorf("confirming the deletion for application %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Application '%s' confirmed for deletion\n", args[0])
			return nil
		}),
	}
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	return cmd
}

func newAppRemoveSourceCommand(f *clientFlags) *cobra.Command {
	var appNamespace, sourceName string
	var position int
	cmd := &cobra.Command{
		Use:     "remove-source APPNAME",
		Short:   "Remove a source from a multi-source Application",
		Example: "  capstan app remove-source guestbook --source-position 2\n  capstan app remove-source guestbook --source-name values",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			app, err := getApp(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if len(app.Spec.Sources) == 0 {
				return fmt.Errorf("application %s has a single source: there is none to remove", args[0])
			}
			if sourceName != "" {
				position = 0
				for i, s := range app.Spec.Sources {
					if s.Name == sourceName {
						position = i + 1
					}
				}
			}
			if position < 1 || position > len(app.Spec.Sources) {
				return fmt.Errorf("source position must be between 1 and %d, or --source-name must name a source", len(app.Spec.Sources))
			}
			if len(app.Spec.Sources) == 1 {
				return fmt.Errorf("cannot remove the only source of application %s", args[0])
			}
			app.Spec.Sources = append(app.Spec.Sources[:position-1], app.Spec.Sources[position:]...)
			if err := putSpec(cmd.Context(), c, args[0], &app.Spec); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Application '%s' updated successfully\n", args[0])
			return nil
		}),
	}
	cmd.Flags().StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Application")
	cmd.Flags().IntVar(&position, "source-position", -1, "1-based position of the source")
	cmd.Flags().StringVar(&sourceName, "source-name", "", "name of the source")
	return cmd
}
