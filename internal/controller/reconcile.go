package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
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
	dests    *destinations
	retries  retryClock
	// tracking is argocd-cm's application.resourceTrackingMethod.
	tracking tracking.Method
	written  writtenVersions
	// namespaces are the namespaces whose Applications are reconciled.
	namespaces appNamespaces
	// operations holds a slot per running sync (--operation-processors).
	operations chan struct{}

	checkerMu      sync.Mutex
	checker        *health.Checker
	checkerVersion string
}

// target is what a sync renders when it is not the spec's current state:
// other revisions (a sync to a revision) and other sources (a rollback).
type target struct {
	sources   []v1alpha1.ApplicationSource
	revisions []string
	// fresh resolves branches and tags afresh: a user's sync deploys what
	// was pushed a moment ago, as Argo CD's does.
	fresh bool
}

// comparison is the outcome of comparing one Application.
type comparison struct {
	dest      *destination
	desired   []*unstructured.Unstructured
	hooks     []*unstructured.Unstructured
	live      map[string]*unstructured.Unstructured // by resourceKey
	prune     []*unstructured.Unstructured
	resources []v1alpha1.ResourceStatus
	sync      v1alpha1.SyncStatusCode
	health    v1alpha1.HealthStatusCode
	render    *repo.Response
	images    []string
	urls      []string
	// denied are the objects (desired or to prune) the project does not
	// permit, by resourceKey, with the reason; a sync touching one fails.
	denied map[string]string
	// shared describes desired objects another Application tracks.
	shared []string
	// orphaned is the OrphanedResourceWarning, when the project asks.
	orphaned *v1alpha1.ApplicationCondition
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	app := &v1alpha1.Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.forget(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.namespaces.allowed(app.Namespace) {
		return ctrl.Result{}, nil
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
	cmp, condition := r.compare(ctx, app, checker, nil, nil)
	r.writeComparison(app, cmp, condition)
	if _, refresh := app.Annotations[v1alpha1.AnnotationRefresh]; refresh {
		before := app.DeepCopy()
		delete(app.Annotations, v1alpha1.AnnotationRefresh)
		if err := r.client.Patch(ctx, app, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("clearing the refresh annotation of Application/%s/%s: %w", app.Namespace, app.Name, err)
		}
		r.written.note(app)
		orig.Annotations = app.Annotations
		orig.ResourceVersion = app.ResourceVersion
		orig.Status.ReconciledAt = nil // a refresh always records its reconcile
	}
	requeue := r.opts.Resync
	if condition != nil && requeue > conditionRetry {
		requeue = conditionRetry // a failed comparison is retried soon, not at the next resync
	}
	status := &statusWriter{client: r.client, base: orig, written: &r.written}
	var op *v1alpha1.Operation
	var retryCount int64
	if cmp != nil && condition == nil {
		app.Status.Conditions = setSkipCondition(app.Status.Conditions, wipesOut(app, cmp))
		var wait time.Duration
		op, retryCount, wait = r.pendingOperation(app, cmp)
		if wait > 0 && wait < requeue {
			requeue = wait
		}
	}
	if op != nil {
		// The operation writes the comparison together with its own state.
		select {
		case r.operations <- struct{}{}:
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		}
		err = r.runOperation(ctx, app, status, op, cmp, checker, retryCount)
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
	a, b := orig.Status.DeepCopy(), app.Status.DeepCopy()
	a.ReconciledAt, b.ReconciledAt = nil, nil
	return !equality.Semantic.DeepEqual(a, b)
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
	return c.ShardOf(r.opts.Replicas) == r.opts.Shard
}

func (r *reconciler) appKey(app *v1alpha1.Application) string {
	return tracking.AppKey(app.Namespace, app.Name, r.opts.Namespace)
}

// healthChecker returns the checker for argocd-cm's current custom health
// checks, compiled once per version of the ConfigMap.
func (r *reconciler) healthChecker(ctx context.Context) (*health.Checker, error) {
	data, version, err := r.argocdCM(ctx)
	if err != nil {
		return nil, err
	}
	r.checkerMu.Lock()
	defer r.checkerMu.Unlock()
	if r.checker != nil && r.checkerVersion == version {
		return r.checker, nil
	}
	checker, err := health.NewChecker(data)
	if err != nil {
		// Only the kinds of the keys named are affected (Unknown health).
		r.opts.Log.Warn("argocd-cm has custom health checks that cannot run", "error", err)
	}
	r.checker, r.checkerVersion = checker, version
	return checker, nil
}

// compare renders the desired state and compares it with the live state. A
// non-nil condition means the comparison failed and nothing may be synced or
// pruned.
func (r *reconciler) compare(ctx context.Context, app *v1alpha1.Application, checker *health.Checker, at *target, after *synced) (*comparison, *v1alpha1.ApplicationCondition) {
	fail := func(t v1alpha1.ApplicationConditionType, err error) (*comparison, *v1alpha1.ApplicationCondition) {
		return nil, &v1alpha1.ApplicationCondition{Type: t, Message: err.Error(), LastTransitionTime: ptrNow()}
	}
	c, err := r.clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return fail(v1alpha1.ApplicationConditionInvalidSpecError, err)
	}
	proj, err := r.checkProject(ctx, app, c)
	if err != nil {
		return fail(v1alpha1.ApplicationConditionInvalidSpecError, err)
	}
	dest, err := r.dests.get(c)
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
	refresh, refreshing := app.Annotations[v1alpha1.AnnotationRefresh]
	resp, err := r.opts.Renderer.Render(ctx, &repo.Request{
		AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Sources: srcs, Revisions: revisions,
		NoCache: refresh == "hard", NoRevisionCache: refreshing || (at != nil && at.fresh),
	})
	if err != nil {
		return fail(v1alpha1.ApplicationConditionComparisonError, fmt.Errorf("rendering manifests: %w", err))
	}
	cmp := &comparison{dest: dest, render: resp, live: map[string]*unstructured.Unstructured{}, denied: map[string]string{}}
	key := r.appKey(app)

	// Watch every kind the app renders or had, so removed objects are found.
	kinds := map[string]*unstructured.Unstructured{}
	for _, obj := range resp.Objects {
		m, err := dest.cache.Mapping(obj.GroupVersionKind())
		if err != nil {
			return fail(v1alpha1.ApplicationConditionComparisonError, err)
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace && obj.GetNamespace() == "" {
			obj.SetNamespace(app.Spec.Destination.Namespace)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			obj.SetNamespace("")
		}
		tracking.Set(r.tracking, key, obj)
		if err := allowed(proj, c, obj, m.Scope.Name() == meta.RESTScopeNameNamespace); err != nil {
			cmp.denied[resourceKey(obj)] = err.Error()
		}
		if isHook(obj) {
			cmp.hooks = append(cmp.hooks, obj)
			continue
		}
		cmp.desired = append(cmp.desired, obj)
		kinds[obj.GroupVersionKind().String()] = obj
	}
	for _, rs := range app.Status.Resources {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(groupVersionKind(rs))
		kinds[u.GroupVersionKind().String()] = u
	}
	for _, obj := range kinds {
		if m, err := dest.cache.Mapping(obj.GroupVersionKind()); err == nil && m.Scope.Name() != meta.RESTScopeNameNamespace &&
			len(c.Namespaces) > 0 && !c.ClusterResources {
			continue // not managed there: never watched, refused by a sync
		}
		if err := dest.cache.Watch(ctx, obj.GroupVersionKind()); err != nil {
			if _, mapErr := dest.cache.Mapping(obj.GroupVersionKind()); mapErr != nil {
				continue // a kind that no longer exists has nothing live
			}
			return fail(v1alpha1.ApplicationConditionComparisonError, err)
		}
	}
	for _, obj := range dest.cache.ManagedBy(key) {
		cmp.live[resourceKey(obj)] = obj
	}
	after.overlay(cmp.live)

	cmp.sync, cmp.health = v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy
	desiredKeys := map[string]bool{}
	for _, obj := range cmp.desired {
		k := resourceKey(obj)
		desiredKeys[k] = true
		liveObj := cmp.live[k]
		if liveObj == nil && !after.deleted(k) {
			if got, found, _ := dest.cache.Get(obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()); found {
				liveObj = got // exists but not yet tracked: compare, the sync will adopt it
				if other := tracking.App(r.tracking, got); other != "" && other != key {
					cmp.shared = append(cmp.shared, fmt.Sprintf("%s/%s is part of applications %s and %s", obj.GetKind(), obj.GetName(), key, other))
				}
			}
		}
		if _, denied := cmp.denied[k]; denied {
			st := resourceStatus(obj)
			st.Status = v1alpha1.SyncStatusCodeUnknown
			cmp.sync = v1alpha1.SyncStatusCodeOutOfSync
			cmp.resources = append(cmp.resources, st)
			continue
		}
		d, err := dest.differ.Diff(ctx, obj, liveObj, app.Spec.IgnoreDifferences)
		if err != nil {
			return fail(v1alpha1.ApplicationConditionComparisonError, err)
		}
		st := resourceStatus(obj)
		st.Status = v1alpha1.SyncStatusCodeSynced
		if d.Modified {
			st.Status = v1alpha1.SyncStatusCodeOutOfSync
			cmp.sync = v1alpha1.SyncStatusCodeOutOfSync
		}
		h, _ := checker.Check(liveObj)
		st.Health = &v1alpha1.HealthStatus{Status: h.Status, Message: h.Message}
		cmp.health = health.Worst(cmp.health, h.Status)
		cmp.resources = append(cmp.resources, st)
		if liveObj != nil {
			cmp.images = append(cmp.images, manifest.Images([]*unstructured.Unstructured{liveObj})...)
			cmp.urls = append(cmp.urls, externalURLs(liveObj)...)
		}
	}
	for k, obj := range cmp.live {
		if desiredKeys[k] || isHook(obj) {
			continue
		}
		m, err := dest.cache.Mapping(obj.GroupVersionKind())
		if err == nil {
			if err := allowed(proj, c, obj, m.Scope.Name() == meta.RESTScopeNameNamespace); err != nil {
				cmp.denied[k] = err.Error()
			}
		}
		st := resourceStatus(obj)
		st.Status, st.RequiresPruning = v1alpha1.SyncStatusCodeOutOfSync, true
		cmp.sync = v1alpha1.SyncStatusCodeOutOfSync
		cmp.resources = append(cmp.resources, st)
		cmp.prune = append(cmp.prune, obj)
	}
	if n, err := r.orphans(ctx, app, proj, dest); err != nil {
		r.opts.Log.Warn("looking for orphaned resources", "application", app.Namespace+"/"+app.Name, "error", err)
	} else {
		cmp.orphaned = orphanWarning(proj, n)
	}
	sort.Slice(cmp.resources, func(i, j int) bool { return statusKey(cmp.resources[i]) < statusKey(cmp.resources[j]) })
	sort.Slice(cmp.prune, func(i, j int) bool { return resourceKey(cmp.prune[i]) < resourceKey(cmp.prune[j]) })
	return cmp, nil
}

// writeComparison records a comparison (or its failure) in the status.
func (r *reconciler) writeComparison(app *v1alpha1.Application, cmp *comparison, condition *v1alpha1.ApplicationCondition) {
	now := metav1.Now()
	app.Status.ReconciledAt = &now
	app.Status.ControllerNamespace = r.opts.Namespace
	var conditions []v1alpha1.ApplicationCondition
	if condition != nil {
		conditions = append(conditions, *condition)
	} else {
		if len(cmp.shared) > 0 {
			conditions = append(conditions, v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionSharedResourceWarning, Message: strings.Join(cmp.shared, "; ")})
		}
		if cmp.orphaned != nil {
			conditions = append(conditions, *cmp.orphaned)
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
	app.Status.Resources = cmp.resources
	app.Status.Sync.Status = cmp.sync
	app.Status.Sync.ComparedTo = v1alpha1.ComparedTo{Destination: app.Spec.Destination, IgnoreDifferences: app.Spec.IgnoreDifferences}
	if len(app.Spec.Sources) > 0 {
		app.Status.Sync.ComparedTo.Sources = app.Spec.Sources
		app.Status.Sync.Revisions, app.Status.SourceTypes = nil, nil
		for _, s := range cmp.render.Sources {
			app.Status.Sync.Revisions = append(app.Status.Sync.Revisions, s.Revision)
			app.Status.SourceTypes = append(app.Status.SourceTypes, s.Type)
		}
	} else if app.Spec.Source != nil && len(cmp.render.Sources) == 1 {
		app.Status.Sync.ComparedTo.Source = *app.Spec.Source
		app.Status.Sync.Revision = cmp.render.Sources[0].Revision
		app.Status.SourceType = cmp.render.Sources[0].Type
	}
	if app.Status.Health.Status != cmp.health {
		app.Status.Health.LastTransitionTime = &now
	}
	app.Status.Health.Status = cmp.health
	app.Status.Summary.Images = dedupe(cmp.images)
	app.Status.Summary.ExternalURLs = dedupe(cmp.urls)
}

// comparisonConditions are the condition types each comparison sets anew.
var comparisonConditions = map[v1alpha1.ApplicationConditionType]bool{
	v1alpha1.ApplicationConditionComparisonError:         true,
	v1alpha1.ApplicationConditionInvalidSpecError:        true,
	v1alpha1.ApplicationConditionUnknownError:            true,
	v1alpha1.ApplicationConditionSharedResourceWarning:   true,
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

// argocdCM returns argocd-cm's data and resourceVersion; none when absent.
// It is read from the manager's cache, not from the API server.
func (r *reconciler) argocdCM(ctx context.Context) (map[string]string, string, error) {
	cm := &corev1.ConfigMap{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: "argocd-cm"}, cm)
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading ConfigMap/%s/argocd-cm: %w", r.opts.Namespace, err)
	}
	return cm.Data, cm.ResourceVersion, nil
}

func ptrNow() *metav1.Time {
	now := metav1.Now()
	return &now
}
