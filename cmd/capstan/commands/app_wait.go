package commands

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

func newAppSyncCommand(f *clientFlags) *cobra.Command {
	var revision, selector, appNamespace, output string
	var prune, dryRun, async, serverSide, outOfSyncOnly, replace, assumeYes bool
	var resources, options, infos, projects []string
	var timeout uint
	retry := &retryFlags{}
	cmd := &cobra.Command{
		Use:   "sync [APPNAME... | -l selector | --project project]",
		Short: "Sync Applications and follow their resources until the syncs are done",
		Example: "  capstan app sync guestbook\n  capstan app sync guestbook --prune --revision v1.2.0\n" +
			"  capstan app sync guestbook --resource apps:Deployment:guestbook-ui --async\n  capstan app sync -l team=web --server-side --retry-limit 3",
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if err := refuseUnsupported(cmd); err != nil {
				return err
			}
			names, err := syncTargets(c, args, selector, projects)
			if err != nil {
				return err
			}
			for flag, option := range map[string]string{"server-side": "ServerSideApply=true", "apply-out-of-sync-only": "ApplyOutOfSyncOnly=true", "replace": "Replace=true"} {
				if set, _ := cmd.Flags().GetBool(flag); set {
					options = append(options, option)
				}
			}
			body := map[string]any{"revision": revision, "prune": prune, "dryRun": dryRun, "syncOptions": map[string]any{"items": options}, "appNamespace": appNamespace}
			var picked []v1alpha1.SyncOperationResource
			for _, r := range resources {
				res, err := parseResource(r)
				if err != nil {
					return err
				}
				picked = append(picked, res)
			}
			if len(picked) > 0 {
				body["resources"] = picked
			}
			if body["infos"], err = parseInfos(infos); err != nil {
				return err
			}
			if body["retryStrategy"], err = retry.strategy(cmd.Flags()); err != nil {
				return err
			}
			for _, name := range names {
				started := &v1alpha1.Application{}
				if err := c.Do("POST", appPath(name, "/sync?appNamespace="+url.QueryEscape(appNamespace)), body, started); err != nil {
					return fmt.Errorf("syncing application %s: %w", name, err)
				}
				if async {
					fmt.Fprintf(cmd.OutOrStdout(), "sync of %s started\n", name)
					continue
				}
				if err := waitForOperation(cmd, c, started, timeout); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&revision, "revision", "", "revision to sync to (default: the target revision)")
	fl.BoolVar(&prune, "prune", false, "delete resources no longer in Git")
	fl.BoolVar(&dryRun, "dry-run", false, "show what a sync would do without doing it")
	fl.BoolVar(&async, "async", false, "start the sync and return at once")
	fl.StringArrayVar(&resources, "resource", nil, "sync only GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (repeatable)")
	fl.StringArrayVar(&options, "sync-option", nil, "sync option for this sync, such as Replace=true (repeatable)")
	fl.UintVar(&timeout, "timeout", 0, "seconds to wait for the sync (0: no limit)")
	fl.StringVarP(&selector, "selector", "l", "", "sync the Applications with these labels")
	fl.StringArrayVar(&projects, "project", nil, "sync the Applications of these projects (repeatable)")
	fl.StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Applications")
	fl.BoolVar(&serverSide, "server-side", false, "apply server-side (Capstan always does; kept for Argo CD's scripts)")
	fl.BoolVar(&outOfSyncOnly, "apply-out-of-sync-only", false, "apply only the resources that differ")
	fl.BoolVar(&replace, "replace", false, "replace resources instead of applying them")
	fl.StringArrayVar(&infos, "info", nil, "note NAME=VALUE kept on the operation (repeatable)")
	fl.BoolVar(&assumeYes, "assumeYes", false, "do not ask for confirmation")
	fl.StringVarP(&output, "output", "o", "wide", "output format of the result: wide")
	retry.add(fl, "retry-")
	unsupported(cmd, map[string]string{"force": "bool", "strategy": "string", "label": "stringArray", "local": "string", "local-repo-root": "string",
		"preview-changes": "bool", "revisions": "stringArray", "source-names": "stringArray", "source-positions": "int64Slice",
		"ignore-normalizer-jq-execution-timeout": "duration"})
	return cmd
}

// syncTargets are the named Applications plus those a selector or the
// projects pick.
func syncTargets(c *apiclient.Client, names []string, selector string, projects []string) ([]string, error) {
	if selector == "" && len(projects) == 0 {
		if len(names) == 0 {
			return nil, fmt.Errorf("name an Application, or pass --selector or --project")
		}
		return names, nil
	}
	q := url.Values{"selector": {selector}}
	for _, p := range projects {
		q.Add("projects", p)
	}
	var list v1alpha1.ApplicationList
	if err := c.Do("GET", "/api/v1/applications?"+q.Encode(), nil, &list); err != nil {
		return nil, fmt.Errorf("listing applications: %w", err)
	}
	for _, a := range list.Items {
		if !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no Application matches the selector %q and projects %v", selector, projects)
	}
	return names, nil
}

func parseInfos(infos []string) ([]*v1alpha1.Info, error) {
	var out []*v1alpha1.Info
	for _, i := range infos {
		name, value, ok := strings.Cut(i, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("info %q is not NAME=VALUE", i)
		}
		out = append(out, &v1alpha1.Info{Name: name, Value: value})
	}
	return out, nil
}

// parseResource reads Argo CD's GROUP:KIND:[NAMESPACE/]NAME.
func parseResource(s string) (v1alpha1.SyncOperationResource, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return v1alpha1.SyncOperationResource{}, fmt.Errorf("resource %q is not GROUP:KIND:NAME", s)
	}
	r := v1alpha1.SyncOperationResource{Group: parts[0], Kind: parts[1], Name: parts[2]}
	if ns, name, ok := strings.Cut(parts[2], "/"); ok {
		r.Namespace, r.Name = ns, name
	}
	return r, nil
}

func newAppWaitCommand(f *clientFlags) *cobra.Command {
	var sync, health, operation, degraded, suspended bool
	var timeout uint
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until an Application is synced, healthy and has no operation running",
		Example: "  capstan app wait guestbook\n  capstan app wait guestbook --health --timeout 120\n" +
			"  capstan app wait guestbook --sync --operation",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !sync && !health && !operation {
				sync, health, operation = true, true, true
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			done := func(a *v1alpha1.Application) (bool, error) {
				h := a.Status.Health.Status
				healthy := h == v1alpha1.HealthStatusHealthy || (degraded && h == v1alpha1.HealthStatusDegraded) || (suspended && h == v1alpha1.HealthStatusSuspended)
				idle := a.Operation == nil && (a.Status.OperationState == nil || a.Status.OperationState.Phase.Completed())
				return (!sync || a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced) && (!health || healthy) && (!operation || idle), nil
			}
			app, err := follow(cmd, c, args[0], "", timeout, done)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
			printAppSummary(cmd.OutOrStdout(), app, nil)
			return nil
		},
	}
	cmd.Flags().BoolVar(&sync, "sync", false, "wait until Synced")
	cmd.Flags().BoolVar(&health, "health", false, "wait until Healthy")
	cmd.Flags().BoolVar(&operation, "operation", false, "wait until no operation is running")
	cmd.Flags().BoolVar(&degraded, "degraded", false, "accept Degraded as the end of --health")
	cmd.Flags().BoolVar(&suspended, "suspended", false, "accept Suspended as the end of --health")
	cmd.Flags().UintVar(&timeout, "timeout", 0, "seconds to wait (0: no limit)")
	return cmd
}

// waitForOperation follows the operation started on the Application (as
// the API returned it) until it completes, printing resources as they
// change, and fails unless it succeeded.
func waitForOperation(cmd *cobra.Command, c *apiclient.Client, started *v1alpha1.Application, timeout uint) error {
	app, err := follow(cmd, c, started.Name, started.ResourceVersion, timeout, func(a *v1alpha1.Application) (bool, error) {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase.Completed(), nil
	})
	if err != nil {
		return err
	}
	st := app.Status.OperationState
	out := cmd.OutOrStdout()
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "Name:\t%s/%s\n", app.Namespace, app.Name)
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
	if st.Phase != v1alpha1.OperationSucceeded {
		return fmt.Errorf("operation of application %s ended %s: %s", app.Name, st.Phase, st.Message)
	}
	return nil
}

// follow streams the Application's changes (from resourceVersion, or
// from its current state) until done accepts it, printing a row each time
// one of its resources changes. timeout 0 waits without a limit.
func follow(cmd *cobra.Command, c *apiclient.Client, name, resourceVersion string, timeout uint, done func(*v1alpha1.Application) (bool, error)) (*v1alpha1.Application, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
		defer cancel()
	}
	progress := newProgress(cmd.OutOrStdout())
	q := url.Values{"name": {name}}
	if resourceVersion != "" {
		q.Set("resourceVersion", resourceVersion)
	}
	var last *v1alpha1.Application
	var finished bool
	var decodeErr error
	err := c.Stream(ctx, "/api/v1/stream/applications?"+q.Encode(), func(data []byte) bool {
		var msg struct {
			Result struct {
				Type        string
				Application *v1alpha1.Application
			}
		}
		if decodeErr = json.Unmarshal(data, &msg); decodeErr != nil || msg.Result.Application == nil {
			return decodeErr == nil
		}
		if msg.Result.Type == "DELETED" {
			decodeErr = fmt.Errorf("application %s was deleted", name)
			return false
		}
		last = msg.Result.Application
		progress.update(last)
		finished, decodeErr = done(last)
		return !finished && decodeErr == nil
	})
	switch {
	case finished:
		return last, nil
	case decodeErr != nil:
		return nil, decodeErr
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("timed out after %ds waiting for application %s", timeout, name)
	case err != nil:
		return nil, fmt.Errorf("following application %s: %w", name, err)
	}
	return nil, fmt.Errorf("the server ended the stream of application %s", name)
}

// progress prints a row whenever a resource's sync status, health or
// sync result changes, as Argo CD's CLI does while it waits.
type progress struct {
	tw   *tabwriter.Writer
	seen map[string]string
}

func newProgress(w io.Writer) *progress {
	p := &progress{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), seen: map[string]string{}}
	fmt.Fprintln(p.tw, "TIMESTAMP\tGROUP\tKIND\tNAMESPACE\tNAME\tSTATUS\tHEALTH\tHOOK\tMESSAGE")
	return p
}

func (p *progress) update(app *v1alpha1.Application) {
	type row struct{ group, kind, namespace, name, status, health, hook, message string }
	rows := map[string]row{}
	for _, r := range app.Status.Resources {
		x := row{group: r.Group, kind: r.Kind, namespace: r.Namespace, name: r.Name, status: string(r.Status)}
		if r.Health != nil {
			x.health = string(r.Health.Status)
		}
		rows[r.Group+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name] = x
	}
	if st := app.Status.OperationState; st != nil && st.SyncResult != nil {
		for _, r := range st.SyncResult.Resources {
			key := r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
			x := rows[key]
			x.group, x.kind, x.namespace, x.name, x.message = r.Group, r.Kind, r.Namespace, r.Name, r.Message
			if r.HookType != "" {
				x.hook, x.status = string(r.HookType), string(r.HookPhase)
			} else if x.status == "" {
				x.status = string(r.Status)
			}
			rows[key] = x
		}
	}
	now := time.Now().Format(time.RFC3339)
	for _, key := range slices.Sorted(maps.Keys(rows)) {
		x := rows[key]
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", x.group, x.kind, x.namespace, x.name, x.status, x.health, x.hook, x.message)
		if p.seen[key] == line {
			continue
		}
		p.seen[key] = line
		fmt.Fprintf(p.tw, "%s\t%s\n", now, line)
	}
	_ = p.tw.Flush()
}
