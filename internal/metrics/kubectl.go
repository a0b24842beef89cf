package metrics

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	// Imported for its init, which registers controller-runtime's own
	// client-go metric first: hookClientGo then chains it instead of
	// being replaced by it.
	_ "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Argo CD's argocd_kubectl_* metrics are client-go's own request
// metrics: every Kubernetes client of the process reports to them (the
// exec ones, of kubectl runs Capstan does not make, are left out). The
// collectors are the process's, registered in each controller's registry.
var (
	kubectlBuckets   = []float64{0.005, 0.1, 0.5, 2.0, 8.0, 30.0}
	kubectlSizes     = []float64{64, 512, 4096, 65536, 1048576, 16777216}
	kubectlCertAge   = prometheus.NewGauge(prometheus.GaugeOpts{Name: "argocd_kubectl_client_cert_rotation_age_seconds", Help: "Age of a certificate that has just been rotated"})
	kubectlLatency   = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_kubectl_request_duration_seconds", Help: "Request latency in seconds", Buckets: kubectlBuckets}, []string{"host", "verb"})
	kubectlResolver  = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_kubectl_dns_resolution_duration_seconds", Help: "Kubectl resolver latency", Buckets: kubectlBuckets}, []string{"host"})
	kubectlReqSize   = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_kubectl_request_size_bytes", Help: "Size of kubectl requests", Buckets: kubectlSizes}, []string{"host", "method"})
	kubectlRespSize  = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_kubectl_response_size_bytes", Help: "Size of kubectl responses", Buckets: kubectlSizes}, []string{"host", "method"})
	kubectlLimiter   = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_kubectl_rate_limiter_duration_seconds", Help: "Kubectl rate limiter latency", Buckets: kubectlBuckets}, []string{"host", "verb"})
	kubectlResults   = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_kubectl_requests_total", Help: "Number of kubectl request results"}, []string{"host", "method", "code"})
	kubectlExecCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_kubectl_exec_plugin_call_total", Help: "Number of kubectl exec plugin calls"}, []string{"code", "call_status"})
	kubectlRetries   = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_kubectl_request_retries_total", Help: "Number of kubectl request retries"}, []string{"host", "method", "code"})
	kubectlTransport = prometheus.NewGauge(prometheus.GaugeOpts{Name: "argocd_kubectl_transport_cache_entries", Help: "Number of kubectl transport cache entries"})
	kubectlCreates   = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_kubectl_transport_create_calls_total", Help: "Number of kubectl transport create calls"}, []string{"result"})

	kubectlCollectors = []prometheus.Collector{kubectlCertAge, kubectlLatency, kubectlResolver, kubectlReqSize, kubectlRespSize,
		kubectlLimiter, kubectlResults, kubectlExecCalls, kubectlRetries, kubectlTransport, kubectlCreates}
)

func init() { hookClientGo() }

// hookClientGo points client-go's metric hooks at the argocd_kubectl_*
// collectors, each after the hook already there. It runs in init, before
// any client exists: client-go reads the hooks without a lock.
func hookClientGo() {
	clientmetrics.ClientCertRotationAge = durationHook{clientmetrics.ClientCertRotationAge}
	clientmetrics.RequestLatency = latencyHook{clientmetrics.RequestLatency, kubectlLatency}
	clientmetrics.RateLimiterLatency = latencyHook{clientmetrics.RateLimiterLatency, kubectlLimiter}
	clientmetrics.ResolverLatency = resolverHook{clientmetrics.ResolverLatency}
	clientmetrics.RequestSize = sizeHook{clientmetrics.RequestSize, kubectlReqSize}
	clientmetrics.ResponseSize = sizeHook{clientmetrics.ResponseSize, kubectlRespSize}
	clientmetrics.RequestResult = resultHook{clientmetrics.RequestResult}
	clientmetrics.ExecPluginCalls = execHook{clientmetrics.ExecPluginCalls}
	clientmetrics.RequestRetry = retryHook{clientmetrics.RequestRetry}
	clientmetrics.TransportCacheEntries = transportHook{clientmetrics.TransportCacheEntries}
	clientmetrics.TransportCreateCalls = createHook{clientmetrics.TransportCreateCalls}
}

type durationHook struct{ prev clientmetrics.DurationMetric }

func (h durationHook) Observe(d time.Duration) {
	h.prev.Observe(d)
	kubectlCertAge.Set(d.Seconds())
}

type latencyHook struct {
	prev clientmetrics.LatencyMetric
	hist *prometheus.HistogramVec
}

func (h latencyHook) Observe(ctx context.Context, verb string, u url.URL, d time.Duration) {
	h.prev.Observe(ctx, verb, u, d)
	h.hist.WithLabelValues(u.Host, verb).Observe(d.Seconds())
}

type resolverHook struct {
	prev clientmetrics.ResolverLatencyMetric
}

func (h resolverHook) Observe(ctx context.Context, host string, d time.Duration) {
	h.prev.Observe(ctx, host, d)
	kubectlResolver.WithLabelValues(host).Observe(d.Seconds())
}

type sizeHook struct {
	prev clientmetrics.SizeMetric
	hist *prometheus.HistogramVec
}

func (h sizeHook) Observe(ctx context.Context, verb, host string, size float64) {
	h.prev.Observe(ctx, verb, host, size)
	h.hist.WithLabelValues(host, verb).Observe(size)
}

type resultHook struct{ prev clientmetrics.ResultMetric }

func (h resultHook) Increment(ctx context.Context, code, method, host string) {
	h.prev.Increment(ctx, code, method, host)
	kubectlResults.WithLabelValues(host, method, code).Inc()
}

type execHook struct{ prev clientmetrics.CallsMetric }

func (h execHook) Increment(exitCode int, status string) {
	h.prev.Increment(exitCode, status)
	kubectlExecCalls.WithLabelValues(strconv.Itoa(exitCode), status).Inc()
}

type retryHook struct{ prev clientmetrics.RetryMetric }

func (h retryHook) IncrementRetry(ctx context.Context, code, method, host string) {
	h.prev.IncrementRetry(ctx, code, method, host)
	kubectlRetries.WithLabelValues(host, method, code).Inc()
}

type transportHook struct {
	prev clientmetrics.TransportCacheMetric
}

func (h transportHook) Observe(n int) {
	h.prev.Observe(n)
	kubectlTransport.Set(float64(n))
}

type createHook struct {
	prev clientmetrics.TransportCreateCallsMetric
}

func (h createHook) Increment(result string) {
	h.prev.Increment(result)
	kubectlCreates.WithLabelValues(result).Inc()
}
