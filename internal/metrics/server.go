package metrics

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// extensionBuckets are argocd_proxy_extension_request_duration_seconds'
// buckets, in seconds, as Argo CD's.
var extensionBuckets = []float64{0.1, 0.25, .5, 1, 2, 5, 10}

// Login outcomes, the status label of argocd_login_request_total.
const (
	LoginSuccess = "success"
	LoginFailure = "failure"
)

// Server holds the API server's metrics, under Argo CD's names on its
// argocd-server-metrics port (8083):
//
//	argocd_info{version}  gauge, 1
//	argocd_login_request_total{status}  counter, local logins ("success", "failure")
//	argocd_proxy_extension_request_total{extension, status}  counter, by HTTP status
//	argocd_proxy_extension_request_duration_seconds{extension}  histogram
//	grpc_server_started_total{grpc_type, grpc_service, grpc_method}  counter, calls of Argo CD's gRPC API
//	grpc_server_handled_total{grpc_type, grpc_service, grpc_method, grpc_code}  counter
//	grpc_server_msg_received_total, grpc_server_msg_sent_total{grpc_type, grpc_service, grpc_method}  counters
//	grpc_server_handling_seconds{grpc_type, grpc_service, grpc_method}  histogram, after EnableHandlingTime
//
// Its methods are safe for concurrent use; a nil *Server records nothing.
type Server struct {
	registry  *prometheus.Registry
	own       []prometheus.Collector
	logins    *prometheus.CounterVec
	extCalls  *prometheus.CounterVec
	extTiming *prometheus.HistogramVec
	started   *prometheus.CounterVec
	handled   *prometheus.CounterVec
	received  *prometheus.CounterVec
	sent      *prometheus.CounterVec
	// handling is nil until EnableHandlingTime.
	handling atomic.Pointer[prometheus.HistogramVec]
}

// NewServer returns the API server's metrics for a server of the version
// given. The Go runtime and process metrics come from the process's
// default registry, which Handler serves too.
func NewServer(version string) *Server {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "argocd_info", Help: "Version of the API server.",
	}, []string{"version"})
	info.WithLabelValues(version).Set(1)
	s := &Server{
		registry: prometheus.NewRegistry(),
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_login_request_total", Help: "Number of login requests to the API server.",
		}, []string{"status"}),
		extCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_proxy_extension_request_total", Help: "Number of requests sent to the configured proxy extensions.",
		}, []string{"extension", "status"}),
		extTiming: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "argocd_proxy_extension_request_duration_seconds",
			Help:    "Request duration in seconds between the API server and the proxy extension backend.",
			Buckets: extensionBuckets,
		}, []string{"extension"}),
	}
	rpc := []string{"grpc_type", "grpc_service", "grpc_method"}
	s.started = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grpc_server_started_total", Help: "Total number of RPCs started on the server.",
	}, rpc)
	s.handled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grpc_server_handled_total", Help: "Total number of RPCs completed on the server, regardless of success or failure.",
	}, append(slices.Clone(rpc), "grpc_code"))
	s.received = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grpc_server_msg_received_total", Help: "Total number of RPC stream messages received on the server.",
	}, rpc)
	s.sent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "grpc_server_msg_sent_total", Help: "Total number of gRPC stream messages sent by the server.",
	}, rpc)
	s.own = []prometheus.Collector{info, s.logins, s.extCalls, s.extTiming, s.started, s.handled, s.received, s.sent}
	s.registry.MustRegister(s.own...)
	return s
}

// EnableHandlingTime serves grpc_server_handling_seconds, the time each
// call took, as Argo CD does when ARGOCD_ENABLE_GRPC_TIME_HISTOGRAM is
// true; off by default, as its series are many.
func (s *Server) EnableHandlingTime() {
	h := handlingHistogram()
	if s.handling.CompareAndSwap(nil, h) {
		s.registry.MustRegister(h)
	}
}

// handlingHistogram is grpc_server_handling_seconds, with go-grpc-middleware's
// buckets (Prometheus' defaults).
func handlingHistogram() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "grpc_server_handling_seconds", Help: "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
		Buckets: prometheus.DefBuckets,
	}, []string{"grpc_type", "grpc_service", "grpc_method"})
}

// Describe sends the descriptions of the API server's own metrics, without
// the Go runtime's and the process's (for the metrics reference).
func (s *Server) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range s.own {
		c.Describe(ch)
	}
	handlingHistogram().Describe(ch)
}

// Login counts a local account's login attempt.
func (s *Server) Login(ok bool) {
	if s == nil {
		return
	}
	status := LoginFailure
	if ok {
		status = LoginSuccess
	}
	s.logins.WithLabelValues(status).Inc()
}

// ExtensionRequest counts one request forwarded to a proxy extension's
// backend, with the HTTP status it answered and how long it took.
func (s *Server) ExtensionRequest(extension string, status int, took time.Duration) {
	if s == nil {
		return
	}
	s.extCalls.WithLabelValues(extension, strconv.Itoa(status)).Inc()
	s.extTiming.WithLabelValues(extension).Observe(took.Seconds())
}

// RPCStarted counts a call of the gRPC API to procedure
// ("/package.Service/Method") of kind (grpc_type: "unary",
// "server_stream", …).
func (s *Server) RPCStarted(procedure, kind string) {
	if s == nil {
		return
	}
	service, method := splitProcedure(procedure)
	s.started.WithLabelValues(kind, service, method).Inc()
}

// RPCHandled counts the end of a call: its gRPC code ("OK", "NotFound", …),
// the messages it received and sent, and (after EnableHandlingTime) how
// long it took.
func (s *Server) RPCHandled(procedure, kind, code string, received, sent int, took time.Duration) {
	if s == nil {
		return
	}
	service, method := splitProcedure(procedure)
	s.handled.WithLabelValues(kind, service, method, code).Inc()
	s.received.WithLabelValues(kind, service, method).Add(float64(received))
	s.sent.WithLabelValues(kind, service, method).Add(float64(sent))
	if h := s.handling.Load(); h != nil {
		h.WithLabelValues(kind, service, method).Observe(took.Seconds())
	}
}

// splitProcedure splits "/package.Service/Method" into the service's full
// name and the method.
func splitProcedure(procedure string) (service, method string) {
	service, method, _ = strings.Cut(strings.TrimPrefix(procedure, "/"), "/")
	return service, method
}

// Handler serves the metrics in Prometheus' text format, with those the
// process's default registry holds (client-go's, for one).
func (s *Server) Handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{s.registry, prometheus.DefaultGatherer}, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{},
		ErrorHandling: promhttp.ContinueOnError,
	})
}
