// Package metrics exposes the application controller's and the API
// server's Prometheus metrics under Argo CD's names and labels, so
// dashboards and alerts written for Argo CD's argocd-metrics and
// argocd-server-metrics endpoints work unchanged. The controller's
// (Metrics):
//
//	argocd_app_info{namespace, name, project, autosync_enabled, repo, dest_server, dest_namespace, sync_status, health_status, operation}  gauge, 1 per Application
//	argocd_app_condition{namespace, name, project, condition}  gauge, number of conditions of that type
//	argocd_app_labels{namespace, name, project, label_<name>...}  gauge, 1 per Application (Options.AppLabels)
//	argocd_app_orphaned_resources_count{namespace, name, project}  gauge, orphaned resources (0 unless the project monitors them)
//	argocd_app_reconcile{namespace, dest_server}  histogram, seconds
//	argocd_app_sync_total{namespace, name, project, dest_server, phase, dry_run}  counter, completed operations
//	argocd_app_sync_duration_seconds_total{namespace, name, project, dest_server}  counter, seconds of completed operations
//	argocd_app_k8s_request_total{namespace, name, project, server, response_code, verb, resource_kind, resource_namespace, dry_run}  counter
//	argocd_cluster_info{server, k8s_version, name}  gauge, 1 per destination cluster
//	argocd_cluster_connection_status{server, k8s_version}  gauge, 1 when the cluster last answered
//	argocd_cluster_labels{server, name, label_<name>...}  gauge, 1 per cluster (Options.ClusterLabels)
//	argocd_cluster_api_resource_objects{server}, argocd_cluster_api_resources{server}, argocd_cluster_cache_age_seconds{server}  gauges
//	argocd_cluster_events_total{server, group, kind}  counter, watch events of the live caches
//	argocd_kubectl_request_duration_seconds{host, verb}, argocd_kubectl_requests_total{host, method, code}, ...  client-go's request metrics, of the whole process
//
// plus the Go runtime and process collectors. Each Metrics has a registry
// of its own, so several controllers can share a process. The API
// server's metrics are a Server's (see NewServer).
//
//	m := metrics.New(apps, clusters, metrics.Options{AppLabels: []string{"team"}})
//	cfg.Wrap(m.WrapTransport(cfg.Host))
//	go m.Serve(ctx, ":8082")
//
// Where Capstan and Argo CD 3.x differ: dest_server is the Application's
// spec.destination.server as written ("" for a destination given by name;
// Argo CD 3 resolves the name to the cluster's URL, as Argo CD 2 did not);
// argocd_app_condition reports every condition type present unless
// Options.AppConditions names some, where Argo CD then reports none; and the
// pre-release labels hydrator_status and phase of argocd_app_info are left
// out.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/httpserve"
	"github.com/capstan-cd/capstan/internal/profiler"
)

// Path is where Serve publishes the metrics, as Argo CD does.
const Path = "/metrics"

// reconcileBuckets are argocd_app_reconcile's buckets, in seconds; the
// same as Argo CD's so that histogram_quantile over both agrees.
var reconcileBuckets = []float64{0.25, 0.5, 1, 2, 4, 8, 16}

// Metrics holds the controller's collectors, registered on its own
// prometheus.Registry. Its methods are safe for concurrent use.
type Metrics struct {
	registry      *prometheus.Registry
	own           []prometheus.Collector // registered, but the Go and process collectors
	reconcile     *prometheus.HistogramVec
	syncs         *counterTable
	syncDurations *counterTable
	k8sRequests   *counterTable
	clusterEvents *prometheus.CounterVec
	orphans       *orphanCounts
	commits       *commits
}

// AppLister lists the Applications argocd_app_info describes. It is called
// once per scrape; the Applications are only read, never kept or changed,
// so a cache's own objects can be returned without copying.
type AppLister interface {
	ListApplications() []*v1alpha1.Application
}

// ClusterStats reports each destination cluster's live cache. It is called
// once per scrape.
type ClusterStats interface {
	ClusterObjectCounts() []ClusterCount
}

// ClusterCount is one cluster's cache figures.
type ClusterCount struct {
	// Server is the cluster's API server URL, the server label.
	Server string
	// Name is the cluster's name (argocd_cluster_info's name).
	Name string
	// Version is its Kubernetes version, major.minor (k8s_version), and
	// Connected whether it answered when last asked; VersionKnown is false
	// until it was first asked, and then neither argocd_cluster_info nor
	// argocd_cluster_connection_status is reported for it.
	Version      string
	Connected    bool
	VersionKnown bool
	// Labels are the cluster Secret's labels (argocd_cluster_labels).
	Labels map[string]string
	// Objects is how many objects the cache holds
	// (argocd_cluster_api_resource_objects).
	Objects int
	// APIs is how many API resources (kinds) the cache watches
	// (argocd_cluster_api_resources).
	APIs int
	// SyncedAt is when the cache was last filled from the cluster; the zero
	// time means not yet, reported as an age of -1 like Argo CD does
	// (argocd_cluster_cache_age_seconds).
	SyncedAt time.Time
}

// Options choose the optional series.
type Options struct {
	// AppLabels are the Application labels argocd_app_labels exports,
	// each as label_<name> with characters Prometheus does not allow in a
	// label name made "_" (--metrics-application-labels). Default none:
	// no argocd_app_labels.
	AppLabels []string
	// AppConditions are the condition types argocd_app_condition reports
	// (--metrics-application-conditions). Default: every type (Argo CD
	// reports none then).
	AppConditions []string
	// ClusterLabels are the cluster Secret labels argocd_cluster_labels
	// exports, each as label_<name> (--metrics-cluster-labels). Default
	// none: no argocd_cluster_labels.
	ClusterLabels []string
}

// New returns Metrics that describe apps and clusters at every scrape.
// Either may be nil; its metrics are then left out.
func New(apps AppLister, clusters ClusterStats, opts Options) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "argocd_app_reconcile",
			Help:    "Application reconciliation performance in seconds.",
			Buckets: reconcileBuckets,
		}, []string{"namespace", "dest_server"}),
		syncs: newCounterTable("argocd_app_sync_total", "Number of application syncs.",
			"namespace", "name", "project", "dest_server", "phase", "dry_run"),
		syncDurations: newCounterTable("argocd_app_sync_duration_seconds_total", "Application sync performance in seconds total.",
			"namespace", "name", "project", "dest_server"),
		k8sRequests: newCounterTable("argocd_app_k8s_request_total", "Number of kubernetes requests executed during application reconciliation.",
			"namespace", "name", "project", "server", "response_code", "verb", "resource_kind", "resource_namespace", "dry_run"),
		clusterEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_cluster_events_total", Help: "Number of processes k8s resource events.",
		}, []string{"server", "group", "kind"}),
		orphans: &orphanCounts{byApp: map[string]int{}},
		commits: newCommits(),
	}
	m.own = append([]prometheus.Collector{m.reconcile, m.syncs, m.syncDurations, m.k8sRequests, m.clusterEvents}, kubectlCollectors...)
	m.own = append(m.own, m.commits.collectors()...)
	if apps != nil {
		m.own = append(m.own, newAppCollector(apps, m.orphans, opts))
	}
	if clusters != nil {
		m.own = append(m.own, newClusterCollector(clusters, opts.ClusterLabels))
	}
	m.registry.MustRegister(m.own...)
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Describe sends the descriptions of Capstan's metrics, without the Go
// runtime's and the process's (for the metrics reference).
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.own {
		c.Describe(ch)
	}
}

// ObserveReconcile records that reconciling app took d.
func (m *Metrics) ObserveReconcile(app *v1alpha1.Application, d time.Duration) {
	m.reconcile.WithLabelValues(app.Namespace, app.Spec.Destination.Server).Observe(d.Seconds())
}

// IncSync counts an operation of app that ended in phase. As in Argo CD,
// only completed operations count (Succeeded, Failed, Error); Running and
// Terminating are ignored. dry_run is the operation's sync.dryRun, read
// from status.operationState (where an automated sync has its only record)
// or else from app.operation.
func (m *Metrics) IncSync(app *v1alpha1.Application, phase v1alpha1.OperationPhase) {
	if !phase.Completed() {
		return
	}
	dryRun := false
	if st := app.Status.OperationState; st != nil && st.Operation.Sync != nil {
		dryRun = st.Operation.Sync.DryRun
	} else if app.Operation != nil && app.Operation.Sync != nil {
		dryRun = app.Operation.Sync.DryRun
	}
	_ = m.syncs.Inc(app.Namespace, app.Name, project(app), app.Spec.Destination.Server,
		string(phase), strconv.FormatBool(dryRun))
	if st := app.Status.OperationState; st != nil && st.FinishedAt != nil {
		_ = m.syncDurations.Add(float64(st.FinishedAt.Unix()-st.StartedAt.Unix()),
			app.Namespace, app.Name, project(app), app.Spec.Destination.Server)
	}
}

// SetOrphanedResources records that app has n orphaned resources
// (argocd_app_orphaned_resources_count; 0 when its project does not
// monitor them). The series goes with the Application.
func (m *Metrics) SetOrphanedResources(app *v1alpha1.Application, n int) {
	m.orphans.set(app, max(n, 0))
}

// ClusterEventCounter returns the function that counts one watch event of
// kind gvk on the cluster at server (argocd_cluster_events_total).
func (m *Metrics) ClusterEventCounter(server string, gvk schema.GroupVersionKind) func() {
	return m.clusterEvents.WithLabelValues(server, gvk.Group, gvk.Kind).Inc
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{},
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Serve serves Handler at Path on addr, with the pprof endpoints while the
// install's controller.profile.enabled is on (profiler.Path), until ctx
// ends, then shuts down, letting scrapes in flight finish (for up to five
// seconds). It returns nil after a shutdown and an error when addr cannot
// be listened on.
func (m *Metrics) Serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serving metrics: %w", err)
	}
	return m.serve(ctx, ln)
}

// serve is Serve on a listener; it closes ln.
func (m *Metrics) serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle(Path, m.Handler())
	profiler.Register(mux, profiler.Path()) // controller.profile.enabled
	if err := httpserve.Serve(ctx, ln, mux); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// project is the Application's project, "default" when unset, as Argo CD
// reports it.
func project(app *v1alpha1.Application) string {
	if app.Spec.Project == "" {
		return "default"
	}
	return app.Spec.Project
}

// slogPrinter passes promhttp's errors (a collector that failed during a
// scrape) to slog's default logger.
type slogPrinter struct{}

func (slogPrinter) Println(v ...any) {
	slog.Warn("collecting metrics", "error", strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}
