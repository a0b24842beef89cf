package notifications

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the controller's Prometheus metrics, under Argo CD's names:
//
//	argocd_notifications_deliveries_total{trigger, service, succeeded}
//	argocd_notifications_trigger_eval_total{name, triggered}
//
// and Capstan's delivery latency per service:
//
//	capstan_notifications_delivery_duration_seconds{service}
//
// plus the Go runtime and process collectors. A nil *Metrics counts
// nothing.
type Metrics struct {
	registry   *prometheus.Registry
	deliveries *prometheus.CounterVec
	evals      *prometheus.CounterVec
	durations  *prometheus.HistogramVec
}

// NewMetrics makes a registry of its own, so several controllers can
// share a process.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_notifications_deliveries_total", Help: "Number of delivered notifications.",
		}, []string{"trigger", "service", "succeeded"}),
		evals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_notifications_trigger_eval_total", Help: "Number of trigger evaluations.",
		}, []string{"name", "triggered"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "capstan_notifications_delivery_duration_seconds", Help: "Time a delivery took, rendering and sending, by service.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"service"}),
	}
	m.registry.MustRegister(m.deliveries, m.evals, m.durations, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Describe sends the descriptions of the controller's own metrics,
// without the Go runtime's and the process's (for the metrics reference).
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.deliveries.Describe(ch)
	m.evals.Describe(ch)
	m.durations.Describe(ch)
}

func (m *Metrics) delivered(trigger, service string, ok bool) {
	if m != nil {
		m.deliveries.WithLabelValues(trigger, service, strconv.FormatBool(ok)).Inc()
	}
}

func (m *Metrics) took(service string, d time.Duration) {
	if m != nil {
		m.durations.WithLabelValues(service).Observe(d.Seconds())
	}
}

func (m *Metrics) evaluated(trigger string, triggered bool) {
	if m != nil {
		m.evals.WithLabelValues(trigger, strconv.FormatBool(triggered)).Inc()
	}
}

// Handler serves the metrics in Prometheus's format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
