package controller

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Options configure the controller. Fields without a default are required.
type Options struct {
	// Config reaches the control cluster, where Applications live; it is
	// also the in-cluster destination.
	Config *rest.Config
	// KubeTransport tunes the clients of the destination clusters read
	// from Secrets, as Config's are (ARGOCD_K8S_*). Default client-go's.
	KubeTransport kubehttp.Options
	// Namespace is the control namespace. Default "argocd".
	Namespace string
	// Renderer renders sources: repo.Service in-process or a repo server client.
	Renderer repo.Renderer
	// Workers reconcile Applications in parallel (--status-processors).
	// Default 20.
	Workers int
	// OperationWorkers bounds the syncs that run at once, within Workers
	// (--operation-processors). Default 10.
	OperationWorkers int
	// Resync is the periodic refresh (argocd-cm timeout.reconciliation).
	// Default 120s.
	Resync time.Duration
	// ResyncJitter spreads the periodic refreshes: each waits Resync and
	// up to this much more, at random, so that many Applications do not
	// render at once (argocd-cm timeout.reconciliation.jitter). Default
	// 0: none.
	ResyncJitter time.Duration
	// HardResync, if set, is how often each Application is rendered
	// afresh, bypassing the manifest cache, as a hard refresh does
	// (argocd-cm timeout.hard.reconciliation). Default 0: never.
	HardResync time.Duration
	// SyncTimeout ends a sync that has run this long, counted from its
	// start across its retries, as Argo CD's --sync-timeout
	// (controller.sync.timeout.seconds): it fails as a terminated one
	// does. Default 0: none.
	SyncTimeout time.Duration
	// SyncWaveDelay is a pause between two waves of a sync, for other
	// controllers to act on what the last one applied (Argo CD's
	// ARGOCD_SYNC_WAVE_DELAY). Default 0: the next wave starts once the
	// last is healthy; Argo CD waits 2 s.
	SyncWaveDelay time.Duration
	// WriteParallelism bounds the objects all syncs write at once, as
	// Argo CD's --kubectl-parallelism-limit bounds its kubectl runs
	// (apply.Applier.Limit). Default 0: no bound; `capstan controller`
	// sets Argo CD's 20.
	WriteParallelism int
	// IgnoreJQTimeout bounds each jq path expression of ignoreDifferences
	// and ignoreResourceUpdates (Argo CD's
	// --ignore-normalizer-jq-execution-timeout-seconds): one that runs
	// longer fails the comparison. Default 1 s.
	IgnoreJQTimeout time.Duration
	// SelfHeal spaces the self-heal syncs of one revision. Default: none
	// (`capstan controller` sets Argo CD's 2 s, factor 3, cap 5 min).
	SelfHeal SelfHealBackoff
	// RepoErrorGracePeriod is how long a failure to render the sources of
	// an Application that compared fine is not shown, its last comparison
	// standing and retried every few seconds, as Argo CD's
	// controller.repo.error.grace.period.seconds. A refresh, a requested
	// operation, or a failure that outlasts it shows the error. Default 0:
	// shown at once; `capstan controller` sets Argo CD's 180 s.
	RepoErrorGracePeriod time.Duration
	// RepoPoll is how often each repository revision the Applications
	// follow is checked for new commits, once per repository and revision.
	// Default 30s.
	RepoPoll time.Duration
	// RepoChanges, if set, names repositories that just changed (from Git
	// webhooks); they are checked at once.
	RepoChanges <-chan repo.Change
	// Replicas is how many controllers share the destination clusters,
	// and Shard (0 to Replicas-1) is this one: it reconciles only the
	// Applications whose destination cluster is its shard. Default 1 and 0.
	Replicas int
	Shard    int
	// Sharding is how the destination clusters are spread over the
	// replicas (--sharding-method). Default legacy.
	Sharding cluster.Sharding
	// LeaderElection makes this controller wait for a Lease in the control
	// namespace (one per shard), so standby replicas can take over.
	LeaderElection bool
	// MetricsAddr, if set, serves Prometheus metrics at /metrics there
	// (Argo CD's names; its controller uses :8082).
	MetricsAddr string
	// Metrics chooses the metrics' optional series (Application labels,
	// condition types). Default: metrics.Options' defaults.
	Metrics metrics.Options
	// ApplicationNamespaces are namespaces (globs), besides Namespace,
	// whose Applications are reconciled; their projects must list them in
	// sourceNamespaces. Default none.
	ApplicationNamespaces []string
	// Log receives one line per reconcile. Default: slog's default logger.
	Log *slog.Logger
	// InstallCRDs installs or upgrades Capstan's CRDs at start (when the
	// API server allows it). Default false: they are waited for.
	InstallCRDs bool
	// Hydrator runs the source hydrator (argocd-cmd-params-cm
	// hydrator.enabled). Default nil: an Application with a source
	// hydrator syncs its hydrated branch as it finds it.
	Hydrator *HydratorOptions
	// Cache, if set, is the process's shared cache of the control cluster
	// (capstan run), read instead of a cache of the controller's own; it
	// must hold the Applications of ApplicationNamespaces. Default: the
	// controller's own.
	Cache *kube.SharedCache
}

// Run reconciles Applications until ctx ends. It waits for the API server
// and the CRDs rather than fail, and when it stops for any reason but ctx
// (the API server went away long enough to lose the leader Lease, say) it
// stands by and starts again: only an invalid Options is an error.
func Run(ctx context.Context, opts Options) error {
	if opts.Namespace == "" {
		opts.Namespace = "argocd"
	}
	if opts.Workers == 0 {
		opts.Workers = 20
	}
	if opts.OperationWorkers == 0 {
		opts.OperationWorkers = 10
	}
	if opts.Resync == 0 {
		opts.Resync = 120 * time.Second
	}
	if opts.RepoPoll == 0 {
		opts.RepoPoll = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Replicas < 1 {
		opts.Replicas = 1
	}
	if opts.Shard < 0 || opts.Shard >= opts.Replicas {
		return fmt.Errorf("shard %d is not one of the %d replicas (0 to %d)", opts.Shard, opts.Replicas, opts.Replicas-1)
	}
	ctrl.SetLogger(logr.FromSlogHandler(opts.Log.Handler()))
	// One leader identity for the process: a controller that starts again
	// after losing its Lease to an API server outage takes it back at once
	// instead of waiting for it to expire.
	host, _ := os.Hostname()
	identity := host + "_" + strings.ToLower(rand.Text())
	return kube.Keep(ctx, opts.Log, "the application controller", func(ctx context.Context) error {
		if err := kube.WaitForCRDs(ctx, opts.Config, kube.PrepareOptions{Install: opts.InstallCRDs, Namespace: opts.Namespace, Log: opts.Log}); err != nil {
			return err
		}
		return run(ctx, opts, identity)
	})
}

// run runs one controller manager until ctx ends or it fails (its leader
// Lease lost, say); identity is its leader election identity.
func run(ctx context.Context, opts Options, identity string) error {
	scheme, err := kube.NewScheme()
	if err != nil {
		return err
	}
	var lock resourcelock.Interface
	if opts.LeaderElection {
		cs, err := kubernetes.NewForConfig(opts.Config)
		if err != nil {
			return err
		}
		lock, err = resourcelock.New(resourcelock.LeasesResourceLock, opts.Namespace, leaseName(opts), cs.CoreV1(), cs.CoordinationV1(),
			resourcelock.ResourceLockConfig{Identity: identity})
		if err != nil {
			return err
		}
	}
	namespaces := appNamespaces{control: opts.Namespace, globs: opts.ApplicationNamespaces, index: &kube.Index[*v1alpha1.Application]{}}
	cacheOpts := ctrlcache.Options{
		DefaultNamespaces: map[string]ctrlcache.Config{opts.Namespace: {}},
		// managedFields are never read and can outweigh the object.
		DefaultTransform: ctrlcache.TransformStripManagedFields(),
	}
	if namespaces.any() {
		// Applications are watched everywhere and filtered by namespace;
		// settings, projects and clusters stay in the control namespace.
		cacheOpts.ByObject = map[client.Object]ctrlcache.ByObject{
			&v1alpha1.Application{}: {Namespaces: map[string]ctrlcache.Config{ctrlcache.AllNamespaces: {}}},
		}
	}
	var newCache ctrlcache.NewCacheFunc
	if opts.Cache != nil {
		newCache = opts.Cache.NewCache
	}
	mgr, err := ctrl.NewManager(opts.Config, ctrl.Options{
		Scheme:                              scheme,
		MapperProvider:                      kube.NewManagerMapper,
		Cache:                               cacheOpts,
		NewCache:                            newCache,
		Metrics:                             metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:              "0",
		LeaderElection:                      opts.LeaderElection,
		LeaderElectionID:                    leaseName(opts),
		LeaderElectionNamespace:             opts.Namespace,
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
	})
	if err != nil {
		return err
	}
	method, err := trackingMethod(ctx, opts.Config, opts.Namespace)
	if err != nil {
		return err
	}
	namespaces.informers = mgr.GetCache()
	events := make(chan event.GenericEvent, 10000)
	counts := &clusterCounts{}
	m := metrics.New(applicationLister{namespaces: namespaces}, counts, opts.Metrics)
	updates := &updateFilter{jqTimeout: opts.IgnoreJQTimeout}
	respectRBAC := &rbacMode{}
	dests := engine.NewDestinations(engine.DestinationOptions{Tracking: method,
		OnChange:      appEvents{controlNamespace: opts.Namespace, events: events}.notify,
		IgnoreUpdate:  updates.ignore,
		RespectRBAC:   respectRBAC.get,
		JQTimeout:     opts.IgnoreJQTimeout,
		WrapTransport: m.WrapTransport,       // argocd_app_k8s_request_total
		EventCounter:  m.ClusterEventCounter, // argocd_cluster_events_total
	})
	counts.dests = dests
	if opts.Hydrator != nil {
		h, err := opts.Hydrator.withDefaults(opts, mgr.GetClient())
		if err != nil {
			return err
		}
		if h.Writer.Observe == nil { // argocd_commitserver_git_request_*
			h.Writer.Observe = func(r git.Request) { m.CommitGitRequest(r.URL, string(r.Kind), r.Took) }
		}
		opts.Hydrator = h
	}
	direct, err := kube.NewClient(opts.Config)
	if err != nil {
		return err
	}
	recorder, err := newEventRecorder(ctx, opts.Config, scheme, mgr.GetClient(), opts.Namespace)
	if err != nil {
		return err
	}
	counts.clusters = &cluster.Registry{Reader: mgr.GetClient(), Namespace: opts.Namespace, InCluster: opts.Config, Transport: opts.KubeTransport}
	r := &reconciler{
		metrics:     m,
		journal:     newJournal(direct, opts.Namespace, leaseName(opts)+"-syncs"),
		client:      mgr.GetClient(),
		events:      recorder,
		opts:        opts,
		clusters:    counts.clusters,
		repoGrace:   repoGrace{period: opts.RepoErrorGracePeriod},
		tracking:    method,
		dests:       dests,
		updates:     updates,
		respectRBAC: respectRBAC,
		namespaces:  namespaces,
		operations:  make(chan struct{}, opts.OperationWorkers),
		writes:      writeLimit(opts.WriteParallelism),
	}
	defer dests.Stop()
	err = ctrl.NewControllerManagedBy(mgr).
		// Status updates, the controller's own writes, must not trigger
		// another reconcile: only spec, operation, deletion, labels and
		// annotations (refresh) do. (Status is not a subresource, as in
		// Argo CD, so every write bumps the generation.)
		For(&v1alpha1.Application{}, builder.WithPredicates(namespaces.predicate(), predicate.Or(
			specOrOperationChanged(), annotationsChanged(), predicate.LabelChangedPredicate{}))).
		Named("application").
		// Several controllers may share a process (tests, one per shard).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: opts.Workers, SkipNameValidation: new(true), RateLimiter: retryLimiter()}).
		WatchesRawSource(source.Channel(events, &handler.EnqueueRequestForObject{})).
		Watches(&v1alpha1.AppProject{}, handler.EnqueueRequestsFromMapFunc(projectApps(namespaces)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
	if err != nil {
		return err
	}
	err = mgr.Add(&revisionPoller{
		namespaces: namespaces, renderer: opts.Renderer,
		interval: opts.RepoPoll, changes: opts.RepoChanges, log: opts.Log, hydrating: opts.Hydrator != nil,
		jitter: func(ctx context.Context) settings.RefreshJitter {
			j := settings.RefreshJitter{Threshold: settings.DefaultWebhookJitterThreshold}
			cm, err := settings.LoadArgoCD(ctx, mgr.GetClient(), opts.Namespace)
			if err == nil {
				j, err = cm.WebhookRefreshJitter()
			}
			if err != nil {
				opts.Log.Warn("reading the webhook refresh jitter", "error", err)
			}
			return j
		},
		enqueue: func(ctx context.Context, app *v1alpha1.Application) {
			select {
			case events <- event.GenericEvent{Object: app}:
			case <-ctx.Done():
			}
		},
	})
	if err != nil {
		return err
	}
	if err := r.followSettings(ctx, mgr.GetCache()); err != nil {
		return err
	}
	// The journal's ended syncs are written out by the elected controller.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { r.journal.run(ctx); return nil })); err != nil {
		return err
	}
	if err := settings.EnsureDefaultProject(ctx, direct, opts.Namespace); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.MetricsAddr != "" {
		served := make(chan struct{})
		defer func() { cancel(); <-served }() // the port is free for the next run
		go func() {
			defer close(served)
			if err := m.Serve(ctx, opts.MetricsAddr); err != nil {
				opts.Log.Error("serving metrics", "addr", opts.MetricsAddr, "error", err)
			}
		}()
	}
	return mgr.Start(ctx)
}

// trackingMethod reads application.resourceTrackingMethod and
// application.instanceLabelKey from argocd-cm once at start, as the live
// caches are indexed by them.
func trackingMethod(ctx context.Context, cfg *rest.Config, namespace string) (tracking.Method, error) {
	c, err := kube.NewClient(cfg)
	if err != nil {
		return tracking.Method{}, err
	}
	cm, err := settings.LoadArgoCD(ctx, c, namespace)
	if err != nil {
		return tracking.Method{}, err
	}
	return tracking.FromSettings(cm.TrackingMethod(), cm.InstanceLabelKey(), cm.InstallationID())
}

// applicationLister lists the Applications argocd_app_info describes.
type applicationLister struct {
	namespaces appNamespaces
}

func (l applicationLister) ListApplications() []*v1alpha1.Application {
	// A scrape never waits long for a cache that is not there yet.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	apps, err := l.namespaces.list(ctx)
	if err != nil {
		return nil
	}
	return apps
}

// leaseName is the leader election Lease of this controller's shard.
func leaseName(opts Options) string {
	if opts.Replicas > 1 {
		return fmt.Sprintf("capstan-application-controller-shard-%d", opts.Shard)
	}
	return "capstan-application-controller"
}

// annotationsChanged passes annotation changes but the controller's own
// removal of the refresh annotation, which follows the refresh's reconcile.
func annotationsChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
		if _, ok := after[v1alpha1.AnnotationRefresh]; !ok {
			if _, ok := before[v1alpha1.AnnotationRefresh]; ok {
				before = maps.Clone(before)
				delete(before, v1alpha1.AnnotationRefresh)
			}
		}
		return !maps.Equal(before, after)
	}}
}

// specOrOperationChanged passes updates that change what the Application
// asks for (its spec or operation) or start its deletion.
func specOrOperationChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*v1alpha1.Application)
		after, ok2 := e.ObjectNew.(*v1alpha1.Application)
		if !ok1 || !ok2 {
			return true
		}
		return (before.DeletionTimestamp == nil) != (after.DeletionTimestamp == nil) ||
			!equality.Semantic.DeepEqual(before.Operation, after.Operation) ||
			!equality.Semantic.DeepEqual(before.Spec, after.Spec)
	}}
}
