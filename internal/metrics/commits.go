package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// commits are the source hydrator's metrics. Argo CD's commit server
// serves them; Capstan's application controller, which commits the
// hydrated manifests itself, serves them under the same names:
//
//	argocd_commitserver_commit_pending_request_total{repo}  gauge, commits under way
//	argocd_commitserver_commit_request_total{repo, response_type}  counter ("success", "failure")
//	argocd_commitserver_commit_request_duration_seconds{repo, response_type}  histogram
//	argocd_commitserver_git_request_total{repo, request_type}  counter ("ls-remote", "fetch", "push")
//	argocd_commitserver_git_request_duration_seconds{repo, request_type}  histogram
type commits struct {
	pending     *prometheus.GaugeVec
	requests    *prometheus.CounterVec
	timing      *prometheus.HistogramVec
	gitRequests *prometheus.CounterVec
	gitTiming   *prometheus.HistogramVec
}

func newCommits() *commits {
	c := &commits{
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "argocd_commitserver_commit_pending_request_total", Help: "Number of pending commit requests",
		}, []string{"repo"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_commitserver_commit_request_total", Help: "Number of commit requests performed handled",
		}, []string{"repo", "response_type"}),
		timing: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "argocd_commitserver_commit_request_duration_seconds", Help: "Commit request duration seconds.", Buckets: gitBuckets,
		}, []string{"repo", "response_type"}),
	}
	c.gitRequests, c.gitTiming = newGitRequests("argocd_commitserver_git")
	return c
}

func (c *commits) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.pending, c.requests, c.timing, c.gitRequests, c.gitTiming}
}

// CommitStarted counts a hydrated commit to the repository at repo (its
// URL without credentials) as under way; call the function it returns
// when the commit is pushed, or has failed.
func (m *Metrics) CommitStarted(repo string) (done func(failed bool)) {
	m.commits.pending.WithLabelValues(repo).Inc()
	start := time.Now()
	return func(failed bool) {
		m.commits.pending.WithLabelValues(repo).Dec()
		response := "success"
		if failed {
			response = "failure"
		}
		m.commits.requests.WithLabelValues(repo, response).Inc()
		m.commits.timing.WithLabelValues(repo, response).Observe(time.Since(start).Seconds())
	}
}

// CommitGitRequest counts one request a hydrated commit made to its
// remote, of the kind given ("ls-remote", "fetch" or "push").
func (m *Metrics) CommitGitRequest(repo, kind string, took time.Duration) {
	m.commits.gitRequests.WithLabelValues(repo, kind).Inc()
	m.commits.gitTiming.WithLabelValues(repo, kind).Observe(took.Seconds())
}
