package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// githubAPI are the GitHub API metrics of the ApplicationSet controller's
// SCM provider and pull request generators, under Argo CD's names
// (applicationsetcontroller.enable.github.api.metrics turns the counting
// on):
//
//	argocd_github_api_requests_total{method, endpoint, status, appset_namespace, appset_name}  counter
//	argocd_github_api_request_duration_seconds{method, endpoint, appset_namespace, appset_name}  histogram
//	argocd_github_api_rate_limit_{remaining,limit,used,reset_seconds}{endpoint, appset_namespace, appset_name, resource}  gauges
type githubAPI struct {
	requests *prometheus.CounterVec
	timing   *prometheus.HistogramVec
	// rateLimit are the gauges of GitHub's X-RateLimit-* answer headers,
	// by the header's suffix (Remaining, Limit, Used; Reset is turned
	// into seconds left).
	rateLimit map[string]*prometheus.GaugeVec
}

func newGitHubAPI() *githubAPI {
	g := &githubAPI{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_github_api_requests_total", Help: "Total number of GitHub API requests"},
			[]string{"method", "endpoint", "status", "appset_namespace", "appset_name"}),
		timing: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_github_api_request_duration_seconds",
			Help: "GitHub API request duration in seconds", Buckets: prometheus.DefBuckets}, []string{"method", "endpoint", "appset_namespace", "appset_name"}),
		rateLimit: map[string]*prometheus.GaugeVec{},
	}
	for header, gauge := range map[string][2]string{
		"Remaining": {"argocd_github_api_rate_limit_remaining", "The number of requests remaining in the current rate limit window"},
		"Limit":     {"argocd_github_api_rate_limit_limit", "The maximum number of requests that you can make per hour"},
		"Used":      {"argocd_github_api_rate_limit_used", "The number of requests used in the current rate limit window"},
		"Reset":     {"argocd_github_api_rate_limit_reset_seconds", "The time left till the current rate limit window resets, in seconds"},
	} {
		g.rateLimit[header] = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: gauge[0], Help: gauge[1]}, []string{"endpoint", "appset_namespace", "appset_name", "resource"})
	}
	return g
}

func (g *githubAPI) collectors() []prometheus.Collector {
	out := []prometheus.Collector{g.requests, g.timing}
	for _, header := range []string{"Remaining", "Limit", "Used", "Reset"} {
		out = append(out, g.rateLimit[header])
	}
	return out
}

// GitHubTransport counts the GitHub API calls next makes for the
// ApplicationSet namespace/name, and the rate limit GitHub reports.
func (a *AppSets) GitHubTransport(next http.RoundTripper, namespace, name string) http.RoundTripper {
	return githubCounting{next: next, m: a.github, namespace: namespace, name: name}
}

type githubCounting struct {
	next            http.RoundTripper
	m               *githubAPI
	namespace, name string
}

// RoundTrip implements http.RoundTripper.
func (t githubCounting) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	endpoint := r.URL.Path
	t.m.timing.WithLabelValues(r.Method, endpoint, t.namespace, t.name).Observe(time.Since(start).Seconds())
	status := "0"
	if resp != nil {
		status = strconv.Itoa(resp.StatusCode)
	}
	t.m.requests.WithLabelValues(r.Method, endpoint, status, t.namespace, t.name).Inc()
	if err != nil || resp == nil {
		return resp, err
	}
	resource := resp.Header.Get("X-RateLimit-Resource")
	for header, gauge := range t.m.rateLimit {
		v, perr := strconv.ParseInt(resp.Header.Get("X-RateLimit-"+header), 10, 64)
		if perr != nil {
			continue
		}
		if header == "Reset" { // a Unix time: the seconds left until then
			v -= time.Now().Unix()
		}
		gauge.WithLabelValues(endpoint, t.namespace, t.name, resource).Set(float64(v))
	}
	return resp, err
}
