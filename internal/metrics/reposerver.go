package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// gitBuckets are argocd_git_request_duration_seconds' buckets, in
// seconds, as Argo CD's.
var gitBuckets = []float64{0.1, 0.25, .5, 1, 2, 4, 10, 20}

// RepoServer holds the repo server's metrics, under Argo CD's names on its
// metrics port (8084):
//
//	argocd_git_request_total{repo, request_type}  counter ("ls-remote", "fetch")
//	argocd_git_request_duration_seconds{repo, request_type}  histogram
//	argocd_git_fetch_fail_total{repo, revision}  counter (revision: "" for a fetch of every branch)
//	argocd_git_lsremote_fail_total{repo, revision}  counter
//	argocd_oci_request_total{repo, request_type}  counter ("resolve-revision", "get-tags", "extract", "digest-metadata", "test-repo")
//	argocd_oci_request_duration_seconds{repo, request_type}  histogram
//	argocd_oci_resolve_revision_fail_total, argocd_oci_extract_fail_total, argocd_oci_digest_metadata_fail_total{repo, revision}  counters
//	argocd_oci_get_tags_fail_total, argocd_oci_test_repo_fail_total{repo}  counters
//	argocd_redis_request_total{initiator, command, failed}  counter, commands to the manifest cache's Redis
//	argocd_redis_request_duration_seconds{initiator}  histogram
//	argocd_repo_pending_request_total{repo}  gauge, requests waiting for a repository's lock
//	argocd_repo_parallelism_wait_duration_seconds  histogram, waits for a reposerver.parallelism.limit turn
//
// Its methods are safe for concurrent use.
type RepoServer struct {
	registry *prometheus.Registry
	own      []prometheus.Collector
	requests *prometheus.CounterVec
	timing   *prometheus.HistogramVec
	fetchErr *prometheus.CounterVec
	lsErr    *prometheus.CounterVec

	ociRequests *prometheus.CounterVec
	ociTiming   *prometheus.HistogramVec
	// ociFailures are the failure counters by request type; those of
	// resolve-revision, extract and digest-metadata are labelled by
	// revision too.
	ociFailures map[string]*prometheus.CounterVec

	redisRequests *prometheus.CounterVec
	redisTiming   *prometheus.HistogramVec

	pending  *prometheus.GaugeVec
	turnWait prometheus.Histogram
}

// redisInitiator is the initiator label of the repo server's Redis
// commands, as Argo CD names the component.
const redisInitiator = "argocd-repo-server"

// NewRepoServer returns the repo server's metrics. The Go runtime and
// process metrics come from the process's default registry, which
// RepoWaiting counts a request that starts (delta 1) or stops (-1)
// waiting for the lock of the repository at url.
func (m *RepoServer) RepoWaiting(url string, delta int) {
	m.pending.WithLabelValues(url).Add(float64(delta))
}

// TurnWait records how long a render waited for a parallelism turn.
func (m *RepoServer) TurnWait(took time.Duration) { m.turnWait.Observe(took.Seconds()) }

// Handler serves too.
func NewRepoServer() *RepoServer {
	m := &RepoServer{
		registry: prometheus.NewRegistry(),
		fetchErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_git_fetch_fail_total", Help: "Number of git fetch requests failures by repo server",
		}, []string{"repo", "revision"}),
		lsErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_git_lsremote_fail_total", Help: "Number of git ls-remote requests failures by repo server",
		}, []string{"repo", "revision"}),
	}
	m.requests, m.timing = newGitRequests("argocd_git")
	m.ociRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_oci_request_total", Help: "Number of OCI requests performed by repo server",
	}, []string{"repo", "request_type"})
	m.ociTiming = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "argocd_oci_request_duration_seconds", Help: "OCI requests duration seconds.", Buckets: gitBuckets,
	}, []string{"repo", "request_type"})
	m.ociFailures = map[string]*prometheus.CounterVec{}
	for _, f := range []struct{ kind, name, help string }{
		{"resolve-revision", "argocd_oci_resolve_revision_fail_total", "Number of OCI resolve revision failures by repo server"},
		{"extract", "argocd_oci_extract_fail_total", "Number of OCI extract requests failures by repo server"},
		{"digest-metadata", "argocd_oci_digest_metadata_fail_total", "Number of OCI digest metadata failures by repo server"},
		{"get-tags", "argocd_oci_get_tags_fail_total", "Number of OCI get tags requests failures by repo server"},
		{"test-repo", "argocd_oci_test_repo_fail_total", "Number of OCI test repo requests failures by repo server"},
	} {
		labels := []string{"repo"}
		if f.kind != "get-tags" && f.kind != "test-repo" {
			labels = append(labels, "revision")
		}
		m.ociFailures[f.kind] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: f.name, Help: f.help}, labels)
	}
	m.redisRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "argocd_redis_request_total", Help: "Number of kubernetes requests executed during application reconciliation.",
	}, []string{"initiator", "command", "failed"})
	m.redisTiming = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "argocd_redis_request_duration_seconds", Help: "Redis requests duration seconds.", Buckets: []float64{0.1, 0.25, .5, 1, 2},
	}, []string{"initiator"})
	m.pending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "argocd_repo_pending_request_total", Help: "Number of pending requests requiring repository lock",
	}, []string{"repo"})
	m.turnWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "argocd_repo_parallelism_wait_duration_seconds", Help: "Time spent waiting for the repo-server manifest generation parallelism semaphore.",
		Buckets: []float64{0.1, 0.25, .5, 1, 2, 4, 10, 20, 60, 120},
	})
	m.own = []prometheus.Collector{m.requests, m.timing, m.fetchErr, m.lsErr, m.ociRequests, m.ociTiming, m.redisRequests, m.redisTiming,
		m.pending, m.turnWait}
	for _, kind := range []string{"resolve-revision", "extract", "digest-metadata", "get-tags", "test-repo"} {
		m.own = append(m.own, m.ociFailures[kind])
	}
	m.registry.MustRegister(m.own...)
	return m
}

// newGitRequests are the counter and histogram of Git requests by repo
// and request_type, named prefix_request_total and
// prefix_request_duration_seconds as Argo CD's repo and commit servers
// name theirs.
func newGitRequests(prefix string) (*prometheus.CounterVec, *prometheus.HistogramVec) {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: prefix + "_request_total", Help: "Number of git requests performed by repo server",
		}, []string{"repo", "request_type"}),
		prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: prefix + "_request_duration_seconds", Help: "Git requests duration seconds.", Buckets: gitBuckets,
		}, []string{"repo", "request_type"})
}

// Describe sends the descriptions of the repo server's own metrics (for
// the metrics reference).
func (m *RepoServer) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.own {
		c.Describe(ch)
	}
}

// GitRequest counts one request to a Git remote of the kind given
// ("ls-remote" or "fetch"), how long it took, and whether it failed.
func (m *RepoServer) GitRequest(repo, kind string, took time.Duration, failed bool) {
	m.requests.WithLabelValues(repo, kind).Inc()
	m.timing.WithLabelValues(repo, kind).Observe(took.Seconds())
	if !failed {
		return
	}
	switch kind {
	case "fetch":
		m.fetchErr.WithLabelValues(repo, "").Inc()
	case "ls-remote":
		m.lsErr.WithLabelValues(repo, "").Inc()
	}
}

// OCIRequest counts one request to an OCI registry of the kind given (see
// the package comment), for revision, how long it took, and whether it
// failed.
func (m *RepoServer) OCIRequest(repo, kind, revision string, took time.Duration, failed bool) {
	m.ociRequests.WithLabelValues(repo, kind).Inc()
	m.ociTiming.WithLabelValues(repo, kind).Observe(took.Seconds())
	fail, ok := m.ociFailures[kind]
	switch {
	case !failed || !ok:
	case kind == "get-tags" || kind == "test-repo":
		fail.WithLabelValues(repo).Inc()
	default:
		fail.WithLabelValues(repo, revision).Inc()
	}
}

// RedisRequest counts one command to the manifest cache's Redis, how long
// it took, and whether it failed (a missing key is no failure).
func (m *RepoServer) RedisRequest(command string, took time.Duration, failed bool) {
	m.redisRequests.WithLabelValues(redisInitiator, command, strconv.FormatBool(failed)).Inc()
	m.redisTiming.WithLabelValues(redisInitiator).Observe(took.Seconds())
}

// Handler serves the metrics in Prometheus' text format, with those the
// process's default registry holds.
func (m *RepoServer) Handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{m.registry, prometheus.DefaultGatherer}, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{},
		ErrorHandling: promhttp.ContinueOnError,
	})
}
