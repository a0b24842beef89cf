package applicationset

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/profiler"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/repo"
)

// LeaseName is the leader election Lease of Argo CD's ApplicationSet
// controller, so Capstan's and Argo CD's never run side by side.
const LeaseName = "58ac56fa.applicationsets.argoproj.io"

// Options configure the ApplicationSet controller. Fields without a
// default are required.
type Options struct {
	// Config reaches the control cluster.
	Config *rest.Config
	// Namespace is the control namespace: ApplicationSets, AppProjects and
	// cluster Secrets. Default "argocd".
	Namespace string
	// Namespaces are other namespaces (globs) whose ApplicationSets are
	// reconciled (--applicationset-namespaces). Default none.
	Namespaces []string
	// Git lists Git revisions for the git generator: a repo server.
	Git repo.GitLister
	// Policy and PolicyOverride: see Reconciler. Default: none, and true.
	Policy         v1alpha1.ApplicationsSyncPolicy
	PolicyOverride *bool
	// PreservedLabels and PreservedAnnotations: see Reconciler.
	PreservedLabels, PreservedAnnotations []string
	// DryRun writes no Applications, only ApplicationSet status.
	DryRun bool
	// PathAwareGlobs, RequeueAfter, SCM and Endpoints: see Sources.
	PathAwareGlobs bool
	RequeueAfter   time.Duration
	SCM            SCMPolicy
	Endpoints      Endpoints
	// Workers reconcile ApplicationSets in parallel
	// (--concurrent-reconciliations). Default 10.
	Workers int
	// MaxResourcesStatus bounds status.resources (0: no bound). Default 5000.
	MaxResourcesStatus int
	// ProgressiveSyncs runs the RollingSync strategy of ApplicationSets
	// (applicationsetcontroller.enable.progressive.syncs). Default false:
	// as in Argo CD, the strategy is then ignored and every generated
	// Application syncs on its own policy.
	ProgressiveSyncs bool
	// LeaderElection waits for the Lease LeaseName, so standby replicas can take over.
	LeaderElection bool
	// MetricsAddr and ProbeAddr serve /metrics and /healthz, /readyz
	// (Argo CD's :8080 and :8081). Default: off.
	MetricsAddr, ProbeAddr string
	// MetricsLabels are the ApplicationSet labels argocd_appset_labels
	// exports (--metrics-applicationset-labels); the first controller of a
	// process decides. Default none.
	MetricsLabels []string
	// Workqueue, when set, rate-limits the queue of ApplicationSets as
	// Argo CD does (applicationsetcontroller.wq.*). Default nil:
	// controller-runtime's limiter (a failed ApplicationSet waits 5 ms,
	// doubling to 1000 s; at most 10 a second, bursts of 100).
	Workqueue *WorkqueueRateLimit
	// GitHubAPIMetrics counts the GitHub API calls of the SCM provider and
	// pull request generators in argocd_github_api_*
	// (applicationsetcontroller.enable.github.api.metrics). Default false.
	GitHubAPIMetrics bool
	// Log receives the controller's lines. Default: slog's default logger.
	Log *slog.Logger
	// Cache, if set, is the process's shared cache of the control cluster
	// (capstan run), read instead of a cache of the controller's own; it
	// must hold the ApplicationSets and Applications of Namespaces.
	// Default: the controller's own, which holds Applications without
	// most of their status.
	Cache *kube.SharedCache
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = "argocd"
	}
	if o.Workers == 0 {
		o.Workers = 10
	}
	if o.MaxResourcesStatus == 0 {
		o.MaxResourcesStatus = 5000
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = "0"
	}
	if o.ProbeAddr == "" {
		o.ProbeAddr = "0"
	}
}

// Run reconciles ApplicationSets until ctx ends, waiting for the API
// server and the ApplicationSet CRD rather than failing.
func Run(ctx context.Context, opts Options) error {
	opts.defaults()
	ctrl.SetLogger(logr.FromSlogHandler(opts.Log.Handler()))
	return kube.Keep(ctx, opts.Log, "the ApplicationSet controller", func(ctx context.Context) error {
		if err := waitForCRD(ctx, opts); err != nil {
			return err
		}
		return run(ctx, opts)
	})
}

// waitForCRD waits until ApplicationSets can be listed.
func waitForCRD(ctx context.Context, opts Options) error {
	return kube.Until(ctx, opts.Log, "the ApplicationSet CRD", kube.Backoff{Max: 2 * time.Second}, func(ctx context.Context) error {
		c, err := kube.NewClient(opts.Config)
		if err != nil {
			return err
		}
		var list v1alpha1.ApplicationSetList
		return c.List(ctx, &list, client.InNamespace(opts.Namespace), client.Limit(1))
	})
}

// slimApplication keeps what the controller reads of an Application:
// metadata, spec, and the sync and health status it reports in the
// ApplicationSet's status. It writes only metadata and spec (JSON
// patches), so the rest of status, the bulk of an Application held for
// thousands of them, is never held.
func slimApplication(obj any) (any, error) {
	app, ok := obj.(*v1alpha1.Application)
	if !ok {
		return obj, nil
	}
	app.ManagedFields = nil
	// Progressive syncs also read the revisions, when the last sync
	// started and whether the Application is in error.
	slim := v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: app.Status.Sync.Status, Revision: app.Status.Sync.Revision,
		Revisions: app.Status.Sync.Revisions}, Health: app.Status.Health, ReconciledAt: app.Status.ReconciledAt}
	if op := app.Status.OperationState; op != nil {
		slim.OperationState = &v1alpha1.OperationState{Phase: op.Phase, StartedAt: op.StartedAt}
	}
	for _, c := range app.Status.Conditions {
		if c.Type == v1alpha1.ApplicationConditionInvalidSpecError || c.Type == v1alpha1.ApplicationConditionUnknownError {
			slim.Conditions = append(slim.Conditions, v1alpha1.ApplicationCondition{Type: c.Type})
		}
	}
	app.Status = slim
	return app, nil
}

func run(ctx context.Context, opts Options) error {
	scheme, err := kube.NewScheme()
	if err != nil {
		return err
	}
	cacheOpts := ctrlcache.Options{
		DefaultNamespaces: map[string]ctrlcache.Config{opts.Namespace: {}},
		DefaultTransform:  ctrlcache.TransformStripManagedFields(),
	}
	// ByObject is keyed by pointer: each kind gets one entry, or the
	// cache would take either of two at random.
	apps, appSets := ctrlcache.ByObject{Transform: slimApplication}, ctrlcache.ByObject{}
	if len(opts.Namespaces) > 0 {
		all := map[string]ctrlcache.Config{ctrlcache.AllNamespaces: {}}
		apps.Namespaces, appSets.Namespaces = all, all
	}
	cacheOpts.ByObject = map[client.Object]ctrlcache.ByObject{&v1alpha1.Application{}: apps, &v1alpha1.ApplicationSet{}: appSets}
	var newCache ctrlcache.NewCacheFunc
	if opts.Cache != nil {
		newCache = opts.Cache.NewCache
	}
	mgr, err := ctrl.NewManager(opts.Config, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		NewCache:                      newCache,
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr, ExtraHandlers: profiler.Handlers(profiler.Path())},
		HealthProbeBindAddress:        opts.ProbeAddr,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              LeaseName,
		LeaderElectionNamespace:       opts.Namespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	override := true
	if opts.PolicyOverride != nil {
		override = *opts.PolicyOverride
	}
	c := &appsetController{
		client:  mgr.GetClient(),
		opts:    opts,
		metrics: processMetrics(opts.MetricsLabels),
		r: &Reconciler{
			Client: mgr.GetClient(),
			Sources: Sources{Git: opts.Git, Reader: mgr.GetClient(), Namespace: opts.Namespace, PathAwareGlobs: opts.PathAwareGlobs,
				RequeueAfter: opts.RequeueAfter, SCM: opts.SCM, Endpoints: opts.Endpoints},
			Policy: opts.Policy, PolicyOverride: override,
			PreservedLabels: opts.PreservedLabels, PreservedAnnotations: opts.PreservedAnnotations,
			DryRun: opts.DryRun, MaxResourcesStatus: opts.MaxResourcesStatus, Log: opts.Log, ProgressiveSyncs: opts.ProgressiveSyncs,
		},
	}
	c.metrics.SetLister(c)
	c.r.Rollouts = c.metrics
	if opts.GitHubAPIMetrics {
		c.r.Sources.CountGitHub = c.metrics.GitHubTransport
	}
	inScope := predicate.NewPredicateFuncs(func(o client.Object) bool { return c.allowed(o.GetNamespace()) })
	err = ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.ApplicationSet{}, builder.WithPredicates(inScope, predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Named("applicationset").
		WithOptions(c.controllerOptions()).
		Watches(&v1alpha1.Application{}, handler.EnqueueRequestForOwner(scheme, mgr.GetRESTMapper(), &v1alpha1.ApplicationSet{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(inScope, appChanged())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(c.allAppSets),
			builder.WithPredicates(predicate.NewPredicateFuncs(isClusterSecret))).
		Watches(&v1alpha1.AppProject{}, handler.EnqueueRequestsFromMapFunc(c.allAppSets)).
		Complete(c)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func isClusterSecret(o client.Object) bool {
	return o.GetLabels()[v1alpha1.LabelSecretType] == v1alpha1.SecretTypeCluster
}

// appChanged passes changes of a generated Application that its
// ApplicationSet sets or reports: metadata, spec, deletion, sync and health.
func appChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*v1alpha1.Application)
		after, ok2 := e.ObjectNew.(*v1alpha1.Application)
		if !ok1 || !ok2 {
			return true
		}
		return (before.DeletionTimestamp == nil) != (after.DeletionTimestamp == nil) ||
			!equality.Semantic.DeepEqual(before.Spec, after.Spec) ||
			!equality.Semantic.DeepEqual(before.Labels, after.Labels) ||
			!equality.Semantic.DeepEqual(before.Annotations, after.Annotations) ||
			!equality.Semantic.DeepEqual(before.Finalizers, after.Finalizers) ||
			before.Status.Sync.Status != after.Status.Sync.Status ||
			before.Status.Health.Status != after.Status.Health.Status
	}}
}

// appsetController is the reconcile.Reconciler of ApplicationSets.
type appsetController struct {
	client  client.Client
	opts    Options
	r       *Reconciler
	metrics *metrics.AppSets
}

// controllerOptions are the controller-runtime options of the queue.
func (c *appsetController) controllerOptions() ctrlcontroller.Options {
	o := ctrlcontroller.Options{MaxConcurrentReconciles: c.opts.Workers, SkipNameValidation: new(true)}
	if c.opts.Workqueue != nil {
		o.RateLimiter = c.opts.Workqueue.limiter()
	}
	return o
}

// appSetMetricsOnce holds the process's ApplicationSet metrics, registered
// once with controller-runtime's registry, which the manager serves.
var appSetMetricsOnce struct {
	sync.Once
	m *metrics.AppSets
}

// processMetrics returns the process's ApplicationSet metrics, made with
// labels by the first caller.
func processMetrics(labels []string) *metrics.AppSets {
	appSetMetricsOnce.Do(func() {
		appSetMetricsOnce.m = metrics.NewAppSets(labels)
		for _, c := range appSetMetricsOnce.m.Collectors() {
			ctrlmetrics.Registry.MustRegister(c)
		}
	})
	return appSetMetricsOnce.m
}

// ListApplicationSets implements metrics.AppSetLister: the ApplicationSets
// in scope, from the manager's cache.
func (c *appsetController) ListApplicationSets() []*v1alpha1.ApplicationSet {
	var list v1alpha1.ApplicationSetList
	if err := c.client.List(context.Background(), &list); err != nil {
		return nil
	}
	out := make([]*v1alpha1.ApplicationSet, 0, len(list.Items))
	for i := range list.Items {
		if c.allowed(list.Items[i].Namespace) {
			out = append(out, &list.Items[i])
		}
	}
	return out
}

func (c *appsetController) allowed(ns string) bool {
	return ns == c.opts.Namespace || project.MatchesAny(c.opts.Namespaces, ns, false)
}

// allAppSets enqueues every ApplicationSet in scope: a cluster Secret or
// project change can change what any of them generates or may write.
func (c *appsetController) allAppSets(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1alpha1.ApplicationSetList
	if err := c.client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, as := range list.Items {
		if c.allowed(as.Namespace) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&as)})
		}
	}
	return out
}

func (c *appsetController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var as v1alpha1.ApplicationSet
	if err := c.client.Get(ctx, req.NamespacedName, &as); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if as.DeletionTimestamp != nil {
		// Its Applications go by garbage collection (owner references),
		// once Finalize lets it go.
		wait, err := c.r.Finalize(ctx, &as)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
		}
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if err := c.r.ensureFinalizer(ctx, &as); err != nil {
		return reconcile.Result{}, err
	}
	start := time.Now()
	_, requeue, err := c.r.Reconcile(ctx, &as)
	c.metrics.ObserveReconcile(&as, time.Since(start))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
	}
	if _, asked := as.Annotations[v1alpha1.AnnotationApplicationSetRefresh]; asked {
		// The refresh a webhook asked for is done.
		patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationApplicationSetRefresh + `":null}}}`)
		if err := c.client.Patch(ctx, &as, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("ApplicationSet/%s/%s: clearing %s: %w", as.Namespace, as.Name, v1alpha1.AnnotationApplicationSetRefresh, err)
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}
