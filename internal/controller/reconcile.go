package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/settings"
)

// conditionRetry is how soon a failed comparison is retried.
const conditionRetry = 10 * time.Second

// staleRetry is how soon a reconcile that read a copy older than the
// controller's last write tries again.
const staleRetry = 100 * time.Millisecond

type reconciler struct {
	client   client.Client
	events   events.EventRecorder
	metrics  *metrics.Metrics
	opts     Options
	clusters *cluster.Registry
	dests    *engine.Destinations
	retries  retryClock
	// tracking is argocd-cm's application.resourceTrackingMethod.
	tracking tracking.Method
	written  writtenVersions
	// repoGrace hides short-lived render failures (RepoErrorGracePeriod).
	repoGrace repoGrace
	// namespaces are the namespaces whose Applications are reconciled.
	namespaces appNamespaces
	// operations holds a slot per running sync (--operation-processors).
	operations chan struct{}
	// writes bounds the objects syncs write at once (WriteParallelism);
	// nil: no bound.
	writes *semaphore.Weighted
	// journal records the automated syncs under way.
	journal *journal

	derivedMu sync.Mutex
	derived   *derived
	// updates is told argocd-cm's ignoreResourceUpdates when it changes.
	updates *updateFilter
	// respectRBAC is resource.respectRBAC, for the live caches.
	respectRBAC *rbacMode
	// cmdParamsVersion is the version of argocd-cmd-params-cm last checked.
	cmdParamsVersion string
	// hardRefreshed is when each Application was last rendered afresh
	// for Options.HardResync.
	hardRefreshed sync.Map
	// shards is the clusters' replicas by an algorithm that weighs them
	// all (Options.Sharding).
	shards shardCache
}

// hardRefreshDue reports whether the app is due for the periodic hard
// refresh (Options.HardResync), and if so counts it as done now.
func (r *reconciler) hardRefreshDue(app *v1alpha1.Application) bool {
	if r.opts.HardResync <= 0 {
		return false
	}
	now := time.Now()
	last, seen := r.hardRefreshed.LoadOrStore(r.appKey(app), now)
	if !seen || now.Sub(last.(time.Time)) < r.opts.HardResync {
		return false // the first look counts from now, as after a restart
	}
	r.hardRefreshed.Store(r.appKey(app), now)
	return true
}

// target is what a sync renders when it is not the spec's current state:
// other revisions (a sync to a revision) and other sources (a rollback).
type target struct {
	sources   []v1alpha1.ApplicationSource
	revisions []string
	// fresh resolves branches and tags afresh: a user's sync deploys what
	// was pushed a moment ago, as Argo CD's does.
	fresh bool
	// manifests, when set, are the desired objects instead of what the
	// sources render: a sync of local manifests.
	manifests []*unstructured.Unstructured
}

// comparison is the engine's comparison of one Application and what the
// controller records beside it.
type comparison struct {
	*engine.Comparison
	dest      *engine.Destination
	resources []v1alpha1.ResourceStatus
	render    *repo.Response
	images    []string
	urls      []string
	// orphaned is the OrphanedResourceWarning, when the project asks.
	orphaned *v1alpha1.ApplicationCondition
	// project is the Application's AppProject as compared.
	project *v1alpha1.AppProject
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, span := tracer().Start(ctx, "reconcile", trace.WithAttributes(attribute.String("application", req.Namespace+"/"+req.Name)))
	defer span.End()
	start := time.Now()
	app := &v1alpha1.Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.forget(req.Namespace, req.Name)
			r.journal.end(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.namespaces.allowed(app.Namespace) {
		return ctrl.Result{}, nil
	}
	if app.Annotations[v1alpha1.AnnotationSkipReconcile] == "true" && app.DeletionTimestamp == nil {
		return ctrl.Result{}, nil // a deletion still runs its finalizer
	}
	if r.written.stale(app) {
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	if !r.ownShard(ctx, app) {
		return ctrl.Result{}, nil
	}
	ctx = metrics.WithApplication(ctx, app) // labels its API requests
	defer func() { r.metrics.ObserveReconcile(app, time.Since(start)) }()
	if app.DeletionTimestamp != nil {
		return ctrl.Result{}, r.finalize(ctx, app)
	}
	orig := app.DeepCopy()
	checker, err := r.healthChecker(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var at *target
	hydrated := r.hydrate(ctx, app)
	if hydrated.pushed {
		at = &target{fresh: true} // the sync source just moved
	}
	comp, condition, renderFailed := r.compareRendering(ctx, app, checker, at, nil)
	if r.repoGrace.hide(r.appKey(app), app, renderFailed, time.Now()) {
		r.opts.Log.Warn("Ignoring temporary failed attempt to compare app state against repo", "application", app.Namespace+"/"+app.Name,
			"error", condition.Message)
		return ctrl.Result{RequeueAfter: min(conditionRetry, r.opts.Resync)}, nil
	}
	r.writeComparison(app, comp, condition)
	if _, refresh := app.Annotations[v1alpha1.AnnotationRefresh]; refresh && !hydrated.putOff {
		// Cleared in the same write as the refresh's status, as Argo CD
		// does: whoever waits for the annotation to go sees the result
		// (after the hydration it asks for, when that waits for a turn).
		delete(app.Annotations, v1alpha1.AnnotationRefresh)
		orig.Status.ReconciledAt = nil // a refresh always records its reconcile
	}
	requeue := nextResync(r.opts.Resync, r.opts.ResyncJitter)
	if condition != nil && requeue > conditionRetry {
		requeue = conditionRetry // a failed comparison is retried soon, not at the next resync
	}
	if hydrated.retry > 0 {
		requeue = min(requeue, hydrated.retry)
	}
	status := &statusWriter{client: r.client, base: orig, written: &r.written}
	var op *v1alpha1.Operation
	var retryCount int64
	if err := r.journal.load(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if comp != nil && condition == nil {
		app.Status.Conditions = setSkipCondition(app.Status.Conditions, wipesOut(app, comp))
		var wait time.Duration
		op, retryCount, wait = r.pendingOperation(app, comp)
		if wait > 0 && wait < requeue {
			requeue = wait
		}
		if op != nil && !terminating(app) {
			if v := checkWindows(app, comp.project, op, time.Now()); v.blocked {
				requeue = min(requeue, v.again)
				if r.requested(app) {
					holdOperation(app, op, v)
				} else {
					r.opts.Log.Info("Sync prevented by sync window", "application", app.Namespace+"/"+app.Name)
				}
				op = nil
			}
		}
	}
	if op != nil {
		fresh := r.journalable(app, op) && r.journal.add(app, op)
		// The operation writes the comparison together with its own state.
		select {
		case r.operations <- struct{}{}:
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		}
		err = r.runOperation(ctx, app, status, op, comp, checker, retryCount, fresh)
		<-r.operations
	} else if r.statusDue(orig, app) {
		err = status.write(ctx, app)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	r.opts.Log.Info("Reconciliation completed", "application", app.Namespace+"/"+app.Name,
		"dest-namespace", app.Spec.Destination.Namespace, "dest-server", app.Spec.Destination.Server,
		"dest-name", app.Spec.Destination.Name, "time_ms", time.Since(start).Milliseconds())
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// statusDue reports whether a reconcile's status must be written: when it
// changed, and at least every half resync period so reconciledAt stays
// current. A reconcile caused by the controller's own sync (its watch
// seeing the applied objects) usually changes nothing and writes nothing.
func (r *reconciler) statusDue(orig, app *v1alpha1.Application) bool {
	if orig.Status.ReconciledAt == nil || time.Since(orig.Status.ReconciledAt.Time) >= r.opts.Resync/2 {
		return true
	}
	// Shallow copies: only their own ReconciledAt pointers change.
	a, b := orig.Status, app.Status
	a.ReconciledAt, b.ReconciledAt = nil, nil
	return !equality.Semantic.DeepEqual(&a, &b)
}

// ownShard reports whether this controller's shard manages the app's
// destination cluster. An unknown destination belongs to shard 0, which
// reports it on the Application.
func (r *reconciler) ownShard(ctx context.Context, app *v1alpha1.Application) bool {
	if r.opts.Replicas <= 1 {
		return true
	}
	c, err := r.clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return r.opts.Shard == 0
	}
	if !r.opts.Sharding.NeedsAll() {
		return c.ShardOf(r.opts.Replicas) == r.opts.Shard
	}
	return r.shards.of(ctx, r, c.Server) == r.opts.Shard
}

func (r *reconciler) appKey(app *v1alpha1.Application) string {
	return tracking.AppKey(app.Namespace, app.Name, r.opts.Namespace)
}

// derived is what the reconciler makes of argocd-cm, made again only
// when the ConfigMap changes.
type derived struct {
	version string
	cm      *settings.ArgoCD
	checker *health.Checker
	// filter is resource.exclusions and inclusions; nil with filterErr
	// when they cannot be read, and then nothing is compared.
	filter    *settings.ResourceFilter
	filterErr error
}

// settings returns what argocd-cm's current version makes.
func (r *reconciler) settings(ctx context.Context) (*derived, error) {
	// Read under the lock: a reader that read an older argocd-cm never
	// puts it back over a newer one (followSettings reads it too).
	r.derivedMu.Lock()
	defer r.derivedMu.Unlock()
	cm, err := settings.LoadArgoCD(ctx, r.client, r.opts.Namespace)
	if err != nil {
		return nil, err
	}
	r.checkCmdParams(ctx)
	if r.derived != nil && r.derived.version == cm.Version {
		return r.derived, nil
	}
	d := &derived{version: cm.Version, cm: cm}
	if d.checker, err = health.NewChecker(cm.Data); err != nil {
		// Only the kinds of the keys named are affected (Unknown health).
		r.opts.Log.Warn("argocd-cm has custom health checks that cannot run", "error", err)
	}
	if _, err := cm.IgnoreDifferencesFor(&v1alpha1.Application{}); err != nil {
		// Left out of every comparison; the others apply.
		r.opts.Log.Warn("argocd-cm has ignoreDifferences customizations or compare options that cannot be read or honoured", "error", err)
	}
	d.filter, d.filterErr = cm.ResourceFilter()
	rules, enabled, err := cm.IgnoreResourceUpdates()
	if err != nil {
		r.opts.Log.Warn("argocd-cm has ignoreResourceUpdates customizations that cannot be read", "error", err)
	}
	if !enabled {
		rules = nil
	}
	if r.updates != nil {
		r.updates.set(rules)
	}
	mode, err := live.ParseRBACMode(cm.Data["resource.respectRBAC"])
	if err != nil {
		r.opts.Log.Warn("argocd-cm's resource.respectRBAC cannot be read; kinds the controller may not list are errors", "error", err)
	}
	if r.respectRBAC != nil {
		r.respectRBAC.set(mode)
	}
	for _, k := range cm.UnknownKeys() {
		r.opts.Log.Warn("argocd-cm has a key Argo CD does not document; it is ignored", "key", k)
	}
	for _, k := range cm.NoEffectKeys() {
		r.opts.Log.Warn("argocd-cm has a key that changes nothing in Capstan", "key", k.Key, "reason", k.Reason)
	}
	r.derived = d
	return d, nil
}

// nextResync is when an Application's periodic refresh comes: after
// resync and up to jitter more, at random.
func nextResync(resync, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return resync
	}
	return resync + rand.N(jitter)
}

// checkCmdParams logs, once per version of argocd-cmd-params-cm, each of
// its keys Argo CD does not document, and each documented one no Capstan
// component reads: nothing reads either. It runs under
// derivedMu, with argocd-cm's checks.
func (r *reconciler) checkCmdParams(ctx context.Context) {
	p, err := settings.LoadCmdParams(ctx, r.client, r.opts.Namespace)
	if err != nil || p.Version == r.cmdParamsVersion {
		return
	}
	r.cmdParamsVersion = p.Version
	for _, k := range p.UnknownKeys() {
		r.opts.Log.Warn(settings.CmdParamsName+" has a key Argo CD does not document; it is ignored", "key", k)
	}
	for _, k := range p.UnreadKeys() {
		r.opts.Log.Info(settings.CmdParamsName+" sets a key that has no effect in Capstan", "key", k.Key, "reason", k.Reason)
	}
}

// healthChecker returns the checker for argocd-cm's current custom health
// checks.
func (r *reconciler) healthChecker(ctx context.Context) (*health.Checker, error) {
	d, err := r.settings(ctx)
	if err != nil {
		return nil, err
	}
	return d.checker, nil
}

// compare renders the desired state and compares it with the live state. A
// non-nil condition means the comparison failed and nothing may be synced or
// pruned.
func (r *reconciler) compare(ctx context.Context, app *v1alpha1.Application, checker *health.Checker, at *target, after *synced) (*comparison, *v1alpha1.ApplicationCondition) {
	comp, cond, _ := r.compareRendering(ctx, app, checker, at, after)
	return comp, cond
}

// compareRendering is compare, also reporting whether a failure was one
// to render the sources on an ordinary reconcile (no refresh asked): what
// the repo error grace period may hide.
func (r *reconciler) compareRendering(ctx context.Context, app *v1alpha1.Application, checker *health.Checker, at *target, after *synced) (_ *comparison, _ *v1alpha1.ApplicationCondition, renderFailed bool) {
	fail := func(t v1alpha1.ApplicationConditionType, err error) (*comparison, *v1alpha1.ApplicationCondition, bool) {
		return nil, &v1alpha1.ApplicationCondition{Type: t, Message: err.Error(), LastTransitionTime: ptrNow()}, false
	}
	c, err := r.clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return fail(v1alpha1.ApplicationConditionInvalidSpecError, err)
	}
	proj, err := r.checkProject(ctx, app, c)
	if err != nil {
		return fail(v1alpha1.ApplicationConditionInvalidSpecError, err)
	}
	dest, err := r.dests.Get(c)
	if err != nil {
		return fail(v1alpha1.ApplicationConditionUnknownError, err)
	}
	srcs := app.Spec.GetSources()
	var revisions []string
	if at != nil {
		revisions = at.revisions
		if len(at.sources) > 0 {
			srcs = at.sources
		}
	}
	if len(srcs) == 0 {
		return fail(v1alpha1.ApplicationConditionInvalidSpecError, errors.New("spec.source or spec.sources is required"))
	}
	set, err := r.settings(ctx)
	if err != nil {
		return fail(v1alpha1.ApplicationConditionUnknownError, err)
	}
	if set.filterErr != nil {
		return fail(v1alpha1.ApplicationConditionComparisonError, set.filterErr)
	}
	resp := &repo.Response{}
	verify := requiresSignatures(proj, srcs)
	if at != nil && at.manifests != nil {
		if verify {
			return fail(v1alpha1.ApplicationConditionComparisonError, message("Cannot use local manifests when signature verification is required"))
		}
		resp.Objects = at.manifests
	} else {
		refresh, refreshing := app.Annotations[v1alpha1.AnnotationRefresh]
		hard := refresh == "hard" || r.hardRefreshDue(app)
		req := r.renderRequest(app, set, srcs)
		req.Revisions = revisions
		req.NoCache, req.NoRevisionCache, req.VerifySignature = hard, hard || refreshing || (at != nil && at.fresh), verify
		if req.VerifyHistory, err = r.historyCheck(ctx, proj, srcs); err != nil {
			return fail(v1alpha1.ApplicationConditionComparisonError, err)
		}
		resp, err = r.opts.Renderer.Render(ctx, req)
		if err != nil {
			comp, cond, _ := fail(v1alpha1.ApplicationConditionComparisonError, fmt.Errorf("rendering manifests: %w", err))
			return comp, cond, !req.NoRevisionCache
		}
		if verify {
			if err := r.verifySignatures(ctx, proj, srcs, resp); err != nil {
				return fail(v1alpha1.ApplicationConditionComparisonError, err)
			}
		}
	}
	ignore, _ := set.cm.IgnoreDifferencesFor(app) // what cannot be read is logged once per version of argocd-cm
	result, err := dest.Compare(ctx, engine.CompareRequest{
		Exclude: set.filter.On(c.Server),
		App:     r.appKey(app), Tracking: r.tracking, Namespace: app.Spec.Destination.Namespace,
		Desired: resp.Objects, Known: app.Status.Resources, IgnoreDifferences: ignore, SyncOptions: app.Spec.GetSyncOptions(),
		Permit: func(obj *unstructured.Unstructured, namespaced bool) error {
			return project.Permits(proj, obj, namespaced, project.Destination{Server: c.Server, Name: c.Name})
		},
		Health: checker, Live: after.over(dest.Watched()),
	})
	if err != nil {
		return fail(v1alpha1.ApplicationConditionComparisonError, err)
	}
	comp := &comparison{Comparison: result, dest: dest, render: resp, project: proj}
	for _, res := range result.Resources {
		comp.resources = append(comp.resources, res.ResourceStatus())
		if res.Target != nil && res.Live != nil && res.Denied == "" {
			comp.images = append(comp.images, manifest.Images([]*unstructured.Unstructured{res.Live})...)
			comp.urls = append(comp.urls, externalURLs(res.Live)...)
		}
	}
	if n, err := r.orphans(ctx, app, proj, dest); err != nil {
		r.opts.Log.Warn("looking for orphaned resources", "application", app.Namespace+"/"+app.Name, "error", err)
	} else {
		comp.orphaned = orphanWarning(proj, n)
		r.metrics.SetOrphanedResources(app, n)
	}
	return comp, nil, false
}

// renderRequest is the request rendering srcs for app, with argocd-cm's
// settings for renderers.
func (r *reconciler) renderRequest(app *v1alpha1.Application, set *derived, srcs []v1alpha1.ApplicationSource) *repo.Request {
	req := repo.RequestFor(app)
	req.Sources = srcs
	req.KustomizeBuildOptions, req.HelmValuesFileSchemes = set.cm.KustomizeBuildOptions(), set.cm.HelmValuesFileSchemes()
	req.DisabledTools = set.cm.DisabledTools()
	req.KustomizeVersions = set.cm.KustomizeVersions()
	return req
}

// writeComparison records a comparison (or its failure) in the status.
func (r *reconciler) writeComparison(app *v1alpha1.Application, comp *comparison, condition *v1alpha1.ApplicationCondition) {
	now := metav1.Now()
	app.Status.ReconciledAt = &now
	app.Status.ControllerNamespace = r.opts.Namespace
	var conditions []v1alpha1.ApplicationCondition
	if condition != nil {
		conditions = append(conditions, *condition)
	} else {
		if len(comp.Shared) > 0 {
			conditions = append(conditions, v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionSharedResourceWarning, Message: strings.Join(comp.Shared, "; ")})
		}
		for _, obj := range comp.Excluded {
			conditions = append(conditions, v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionExcludedResourceWarning,
				Message: fmt.Sprintf("Resource %s/%s %s is excluded in the settings", obj.GroupVersionKind().Group, obj.GetKind(), obj.GetName())})
		}
		if comp.orphaned != nil {
			conditions = append(conditions, *comp.orphaned)
		}
		for i := range conditions {
			conditions[i].LastTransitionTime = &now
		}
	}
	app.Status.Conditions = keepConditions(app.Status.Conditions, conditions)
	if condition != nil {
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		return
	}
	app.Status.Resources = comp.resources
	app.Status.Sync.Status = comp.Sync
	app.Status.Sync.ComparedTo = v1alpha1.ComparedTo{Destination: app.Spec.Destination, IgnoreDifferences: app.Spec.IgnoreDifferences}
	if len(app.Spec.Sources) > 0 {
		app.Status.Sync.ComparedTo.Sources = app.Spec.Sources
		app.Status.Sync.Revisions, app.Status.SourceTypes = nil, nil
		for _, s := range comp.render.Sources {
			app.Status.Sync.Revisions = append(app.Status.Sync.Revisions, s.Revision)
			app.Status.SourceTypes = append(app.Status.SourceTypes, s.Type)
		}
	} else if src := app.Spec.SingleSource(); src != nil && len(comp.render.Sources) == 1 {
		app.Status.Sync.ComparedTo.Source = *src
		app.Status.Sync.Revision = comp.render.Sources[0].Revision
		app.Status.SourceType = comp.render.Sources[0].Type
	}
	if app.Status.Health.Status != comp.Health {
		app.Status.Health.LastTransitionTime = &now
	}
	app.Status.Health.Status = comp.Health
	app.Status.Summary.Images = dedupe(comp.images)
	app.Status.Summary.ExternalURLs = dedupe(comp.urls)
	app.Status.Summary.IsAppOfApps = managesApplications(comp.resources)
}

// managesApplications reports whether an app's resources include
// Applications (Argo CD's "app of apps").
func managesApplications(resources []v1alpha1.ResourceStatus) bool {
	for _, r := range resources {
		if r.Group == v1alpha1.GroupVersion.Group && r.Kind == "Application" {
			return true
		}
	}
	return false
}

// comparisonConditions are the condition types each comparison sets anew.
var comparisonConditions = map[v1alpha1.ApplicationConditionType]bool{
	v1alpha1.ApplicationConditionComparisonError:         true,
	v1alpha1.ApplicationConditionInvalidSpecError:        true,
	v1alpha1.ApplicationConditionUnknownError:            true,
	v1alpha1.ApplicationConditionSharedResourceWarning:   true,
	v1alpha1.ApplicationConditionExcludedResourceWarning: true,
	v1alpha1.ApplicationConditionOrphanedResourceWarning: true,
}

// keepConditions replaces the comparison's conditions in old with fresh,
// keeping the transition time of those that did not change.
func keepConditions(old, fresh []v1alpha1.ApplicationCondition) []v1alpha1.ApplicationCondition {
	var out []v1alpha1.ApplicationCondition
	for _, o := range old {
		if !comparisonConditions[o.Type] {
			out = append(out, o)
		}
	}
	for _, c := range fresh {
		for _, o := range old {
			if o.Type == c.Type && o.Message == c.Message {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	return out
}

func ptrNow() *metav1.Time {
	now := metav1.Now()
	return &now
}
