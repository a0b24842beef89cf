package metrics

import (
	"net/http"
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
//
// Its methods are safe for concurrent use.
type RepoServer struct {
	registry *prometheus.Registry
	own      []prometheus.Collector
	requests *prometheus.CounterVec
	timing   *prometheus.HistogramVec
	fetchErr *prometheus.CounterVec
	lsErr    *prometheus.CounterVec
}

// NewRepoServer returns the repo server's metrics. The Go runtime and
// process metrics come from the process's default registry, which
// Handler serves too.
func NewRepoServer() *RepoServer {
	m := &RepoServer{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_git_request_total", Help: "Number of git requests performed by repo server",
		}, []string{"repo", "request_type"}),
		timing: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "argocd_git_request_duration_seconds", Help: "Git requests duration seconds.", Buckets: gitBuckets,
		}, []string{"repo", "request_type"}),
		fetchErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_git_fetch_fail_total", Help: "Number of git fetch requests failures by repo server",
		}, []string{"repo", "revision"}),
		lsErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_git_lsremote_fail_total", Help: "Number of git ls-remote requests failures by repo server",
		}, []string{"repo", "revision"}),
	}
	m.own = []prometheus.Collector{m.requests, m.timing, m.fetchErr, m.lsErr}
	m.registry.MustRegister(m.own...)
	return m
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

// Handler serves the metrics in Prometheus' text format, with those the
// process's default registry holds.
func (m *RepoServer) Handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{m.registry, prometheus.DefaultGatherer}, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{},
		ErrorHandling: promhttp.ContinueOnError,
	})
}
