package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/appstate"
)

func newAppSyncCommand(f *clientFlags) *cobra.Command {
	var revision, selector, appNamespace, output, strategy, local, localRepoRoot string
	var prune, dryRun, async, serverSide, outOfSyncOnly, replace, assumeYes, preview, force bool
	var resources, options, infos, projects, revisions, sourceNames, labels []string
	var sourcePositions []int64
	var timeout uint
	retry := &retryFlags{}
	cmd := &cobra.Command{
		Use:   "sync [APPNAME... | -l selector | --project project]",
		Short: "Sync Applications and follow their resources until the syncs are done",
		Example: "  capstan app sync guestbook\n  capstan app sync guestbook --prune --revision v1.2.0\n" +
			"  capstan app sync guestbook --resource apps:Deployment:guestbook-ui --async\n  capstan app sync -l team=web --server-side --retry-limit 3",
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			names, err := syncTargets(cmd.Context(), c, args, selector, projects)
			if err != nil {
				return err
			}
			for flag, option := range map[string]string{"server-side": "ServerSideApply=true", "apply-out-of-sync-only": "ApplyOutOfSyncOnly=true", "replace": "Replace=true"} {
				if set, _ := cmd.Flags().GetBool(flag); set {
					options = append(options, option)
				}
			}
			body := map[string]any{"revision": revision, "prune": prune, "dryRun": dryRun, "syncOptions": map[string]any{"items": options}, "appNamespace": appNamespace,
				"revisions": revisions, "sourcePositions": sourcePositions, "sourceNames": sourceNames}
			var picked []v1alpha1.SyncOperationResource
			for _, r := range resources {
				res, err := parseResource(r)
				if err != nil {
					return err
				}
				picked = append(picked, res)
			}
			if body["infos"], err = parseInfos(infos); err != nil {
				return err
			}
			if body["retryStrategy"], err = retry.strategy(cmd.Flags()); err != nil {
				return err
			}
			if body["strategy"], err = syncStrategy(strategy, force); err != nil {
				return err
			}
			if local != "" {
				if len(names) != 1 {
					return errors.New("--local syncs one application at a time")
				}
				if body["manifests"], err = localManifests(cmd.Context(), c, qualified(names[0], appNamespace), local, localRepoRoot); err != nil {
					return err
				}
			}
			for _, name := range names {
				name = qualified(name, appNamespace)
				body["resources"] = picked
				if len(labels) > 0 {
					labelled, err := resourcesLabelled(cmd.Context(), c, name, labels)
					if err != nil {
						return err
					}
					body["resources"] = append(slices.Clone(picked), labelled...)
				}
				if preview && !previewSync(cmd, c, name, assumeYes) {
					continue
				}
				started := &v1alpha1.Application{}
				if err := c.Do(cmd.Context(), "POST", appPath(name, "/sync"), body, started); err != nil {
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
	fl.BoolVar(&serverSide, "server-side", false, "apply server-side in this sync (ServerSideApply=true), whatever the Application's own sync options say")
	fl.BoolVar(&outOfSyncOnly, "apply-out-of-sync-only", false, "apply only the resources that differ")
	fl.BoolVar(&replace, "replace", false, "replace resources instead of applying them")
	fl.StringArrayVar(&infos, "info", nil, "note NAME=VALUE kept on the operation (repeatable)")
	fl.BoolVar(&assumeYes, "assumeYes", false, "do not ask for confirmation")
	fl.StringVarP(&output, "output", "o", "wide", "output format of the result: wide")
	fl.StringArrayVar(&revisions, "revisions", nil, "revisions of several sources, each with a --source-positions or --source-names entry")
	fl.Int64SliceVar(&sourcePositions, "source-positions", nil, "positions (from 1) of the sources --revisions are for")
	fl.StringArrayVar(&sourceNames, "source-names", nil, "names of the sources --revisions are for")
	fl.StringArrayVar(&labels, "label", nil, "sync only the resources with this label, KEY=VALUE (repeatable)")
	fl.BoolVar(&preview, "preview-changes", false, "show the differences and ask before syncing")
	retry.add(fl, "retry-")
	fl.StringVar(&strategy, "strategy", "", "sync strategy: hook (run hooks, the default) or apply (apply only, no hooks)")
	fl.BoolVar(&force, "force", false, "delete and recreate what cannot be changed in place (with Replace=true, everything synced)")
	fl.StringVar(&local, "local", "", "sync what this local directory (the source's path) renders instead of the repository (not with automated sync, but for --dry-run)")
	fl.StringVar(&localRepoRoot, "local-repo-root", "/", "the local repository's root, which --local lies in")
	serverJQTimeout(cmd)
	serverSideBatches(cmd)
	return cmd
}

// syncStrategy is the strategy of --strategy and --force, as Argo CD's
// CLI sends it; nil when neither is given.
func syncStrategy(name string, force bool) (*v1alpha1.SyncStrategy, error) {
	if name == "" && !force {
		return nil, nil
	}
	switch name {
	case "apply":
		return &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: force}}, nil
	case "", "hook":
		return &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{SyncStrategyApply: v1alpha1.SyncStrategyApply{Force: force}}}, nil
	}
	return nil, fmt.Errorf("unknown sync strategy %q: want hook or apply", name)
}

// resourcesLabelled are the app's resources whose desired state carries
// every KEY=VALUE label, as Argo CD's app sync --label picks them.
func resourcesLabelled(ctx context.Context, c *apiclient.Client, name string, labels []string) ([]v1alpha1.SyncOperationResource, error) {
	want, err := keyValues("label", labels)
	if err != nil {
		return nil, err
	}
	var resp struct{ Items []appstate.ResourceDiff }
	if err := c.Do(ctx, "GET", appPath(name, "/managed-resources"), nil, &resp); err != nil {
		return nil, fmt.Errorf("reading the resources of %s: %w", name, err)
	}
	var out []v1alpha1.SyncOperationResource
	for _, d := range resp.Items {
		var target struct {
			Metadata struct{ Labels map[string]string }
		}
		if d.TargetState == "" || json.Unmarshal([]byte(d.TargetState), &target) != nil {
			continue
		}
		matches := true
		for k, v := range want {
			matches = matches && target.Metadata.Labels[k] == v
		}
		if matches {
			out = append(out, v1alpha1.SyncOperationResource{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no resource of %s has the labels %v", name, labels)
	}
	return out, nil
}

// previewSync prints what a sync of the app would change and asks
// whether to go ahead (yes answers it).
func previewSync(cmd *cobra.Command, c *apiclient.Client, name string, yes bool) bool {
	var resp struct{ Items []appstate.ResourceDiff }
	if err := c.Do(cmd.Context(), "GET", appPath(name, "/managed-resources"), nil, &resp); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "comparing %s: %v\n", name, err)
		return false
	}
	for _, d := range resp.Items {
		if d.Modified && !d.Hook {
			_ = printDiff(cmd.OutOrStdout(), d, isTerminal(cmd.OutOrStdout()))
		}
	}
	if yes {
		return true
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Do you want to continue and sync %s? [y/n] ", name)
	var answer string
	_, _ = fmt.Fscanln(cmd.InOrStdin(), &answer)
	return strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes")
}

// syncTargets are the named Applications plus those a selector or the
// projects pick.
func syncTargets(ctx context.Context, c *apiclient.Client, names []string, selector string, projects []string) ([]string, error) {
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
	if err := c.Do(ctx, "GET", apiclient.Path("/api/v1/applications").With(q), nil, &list); err != nil {
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
	var sync, health, operation, degraded, suspended, deleted, hydrated bool
	var timeout uint
	var selector, appNamespace, output string
	var resources []string
	cmd := &cobra.Command{
		Use:   "wait [APPNAME... | -l selector]",
		Short: "Wait until Applications are synced, healthy and have no operation running (or are deleted)",
		Example: "  capstan app wait guestbook\n  capstan app wait guestbook --health --timeout 120\n" +
			"  capstan app wait -l team=web --sync --operation\n  capstan app wait guestbook --resource apps:Deployment:web --health\n  capstan app wait guestbook --delete",
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if !sync && !health && !operation && !deleted && !hydrated {
				sync, health, operation = true, true, true
			}
			var only []v1alpha1.SyncOperationResource
			for _, r := range resources {
				res, err := parseResource(r)
				if err != nil {
					return err
				}
				only = append(only, res)
			}
			names, err := syncTargets(cmd.Context(), c, args, selector, nil)
			if err != nil {
				return err
			}
			done := func(a *v1alpha1.Application, gone bool) (bool, error) {
				if deleted {
					return gone, nil
				}
				if gone {
					return false, fmt.Errorf("application %s was deleted", a.Name)
				}
				st := waitState(a, only)
				healthy := st.health == v1alpha1.HealthStatusHealthy || (degraded && st.health == v1alpha1.HealthStatusDegraded) ||
					(suspended && st.health == v1alpha1.HealthStatusSuspended)
				idle := a.Operation == nil && (a.Status.OperationState == nil || a.Status.OperationState.Phase.Completed())
				return (!sync || st.synced) && (!health || healthy) && (!operation || idle) && (!hydrated || isHydrated(a)), nil
			}
			for _, name := range names {
				if deleted && gone(cmd.Context(), c, qualified(name, appNamespace)) {
					fmt.Fprintf(cmd.OutOrStdout(), "application %s was deleted\n", name)
					continue
				}
				app, err := follow(cmd, c, qualified(name, appNamespace), "", timeout, done)
				if err != nil {
					return err
				}
				if deleted {
					fmt.Fprintf(cmd.OutOrStdout(), "application %s was deleted\n", name)
					continue
				}
				switch output {
				case "wide", "":
					fmt.Fprintln(cmd.OutOrStdout())
					printAppSummary(cmd.OutOrStdout(), app, nil)
				default:
					if err := printApps(cmd.OutOrStdout(), []v1alpha1.Application{*app}, output); err != nil {
						return err
					}
				}
			}
			return nil
		}),
	}
	fl := cmd.Flags()
	fl.BoolVar(&sync, "sync", false, "wait until Synced")
	fl.BoolVar(&health, "health", false, "wait until Healthy")
	fl.BoolVar(&operation, "operation", false, "wait until no operation is running")
	fl.BoolVar(&degraded, "degraded", false, "accept Degraded as the end of --health")
	fl.BoolVar(&suspended, "suspended", false, "accept Suspended as the end of --health")
	fl.BoolVar(&deleted, "delete", false, "wait until the Application is deleted")
	fl.UintVar(&timeout, "timeout", 0, "seconds to wait (0: no limit)")
	fl.StringVarP(&selector, "selector", "l", "", "wait for the Applications with these labels")
	fl.StringVarP(&appNamespace, "app-namespace", "N", "", "namespace of the Applications")
	fl.StringArrayVar(&resources, "resource", nil, "wait only for GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (repeatable)")
	fl.StringVarP(&output, "output", "o", "wide", "output format of the result: wide, name, json or yaml")
	fl.BoolVar(&hydrated, "hydrated", false, "wait until the source hydrator has hydrated the dry source")
	return cmd
}

// isHydrated reports whether an Application's source hydrator (if it has
// one) last hydrated successfully.
func isHydrated(a *v1alpha1.Application) bool {
	op := a.Status.SourceHydrator.CurrentOperation
	return a.Spec.SourceHydrator == nil || op != nil && op.Phase == v1alpha1.HydrateOperationPhaseHydrated
}

// gone reports whether the API answers that the Application does not
// exist.
func gone(ctx context.Context, c *apiclient.Client, name string) bool {
	var e *apiclient.Error
	err := c.Do(ctx, "GET", appPath(name, ""), nil, nil)
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// waitedState is what app wait looks at: the whole app's sync and health,
// or only those of the resources named.
type waitedState struct {
	synced bool
	health v1alpha1.HealthStatusCode
}

// waitState is the app's state, or the worst of the named resources'.
func waitState(a *v1alpha1.Application, only []v1alpha1.SyncOperationResource) waitedState {
	if len(only) == 0 {
		return waitedState{synced: a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced, health: a.Status.Health.Status}
	}
	st := waitedState{synced: true, health: v1alpha1.HealthStatusHealthy}
	for _, want := range only {
		i := slices.IndexFunc(a.Status.Resources, func(r v1alpha1.ResourceStatus) bool {
			return r.Group == want.Group && r.Kind == want.Kind && r.Name == want.Name && (want.Namespace == "" || r.Namespace == want.Namespace)
		})
		if i < 0 {
			return waitedState{health: v1alpha1.HealthStatusMissing}
		}
		r := a.Status.Resources[i]
		st.synced = st.synced && r.Status == v1alpha1.SyncStatusCodeSynced
		if r.Health != nil && r.Health.Status != v1alpha1.HealthStatusHealthy {
			st.health = r.Health.Status
		}
	}
	return st
}

// waitForOperation follows the operation started on the Application (as
// the API returned it) until it completes, printing resources as they
// change, and fails unless it succeeded.
func waitForOperation(cmd *cobra.Command, c *apiclient.Client, started *v1alpha1.Application, timeout uint) error {
	app, err := follow(cmd, c, started.Namespace+"/"+started.Name, started.ResourceVersion, timeout, func(a *v1alpha1.Application, gone bool) (bool, error) {
		if gone {
			return false, fmt.Errorf("application %s was deleted", a.Name)
		}
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase.Completed(), nil
	})
	if err != nil {
		return err
	}
	st := app.Status.OperationState
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\nName: %s/%s\n", app.Namespace, app.Name)
	printOperation(out, app)
	if st.Phase != v1alpha1.OperationSucceeded {
		return fmt.Errorf("operation of application %s ended %s: %s", app.Name, st.Phase, st.Message)
	}
	return nil
}

// follow streams the Application's changes (from resourceVersion, or
// from its current state) until done accepts it (gone: it was deleted),
// printing a row each time one of its resources changes. name may be
// namespace/name; timeout 0 waits without a limit.
func follow(cmd *cobra.Command, c *apiclient.Client, name, resourceVersion string, timeout uint, done func(a *v1alpha1.Application, gone bool) (bool, error)) (*v1alpha1.Application, error) {
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
	if ns, short, ok := strings.Cut(name, "/"); ok {
		q = url.Values{"name": {short}, "appNamespace": {ns}}
		name = short
	}
	if resourceVersion != "" {
		q.Set("resourceVersion", resourceVersion)
	}
	var last *v1alpha1.Application
	var finished bool
	var decodeErr error
	err := c.Stream(ctx, apiclient.Path("/api/v1/stream/applications").With(q), func(data []byte) bool {
		var msg struct {
			Result struct {
				Type        string
				Application *v1alpha1.Application
			}
		}
		if decodeErr = json.Unmarshal(data, &msg); decodeErr != nil || msg.Result.Application == nil {
			return decodeErr == nil
		}
		last = msg.Result.Application
		gone := msg.Result.Type == "DELETED"
		if !gone {
			progress.update(last)
		}
		finished, decodeErr = done(last, gone)
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
