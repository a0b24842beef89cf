package updater

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the updater's Prometheus metrics, named as Argo CD Image
// Updater names them.
type Metrics struct {
	ApplicationsWatched prometheus.Gauge
	ImagesWatched       prometheus.Gauge
	ImagesUpdated       *prometheus.CounterVec
	ImagesErrors        *prometheus.CounterVec
	RegistryRequests    *prometheus.CounterVec
	RegistryFailures    *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ApplicationsWatched: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "argocd_image_updater_applications_watched_total", Help: "Applications with images to keep current.",
		}),
		ImagesWatched: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "argocd_image_updater_images_watched_total", Help: "Distinct images checked in the last cycle.",
		}),
		ImagesUpdated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_image_updater_images_updated_total", Help: "Images moved to a new version, per Application.",
		}, []string{"application"}),
		ImagesErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_image_updater_images_errors_total", Help: "Errors checking or updating images, per Application.",
		}, []string{"application"}),
		RegistryRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_image_updater_registry_requests_total", Help: "Requests sent to registries.",
		}, []string{"registry"}),
		RegistryFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "argocd_image_updater_registry_requests_failed_total", Help: "Registry requests that failed.",
		}, []string{"registry"}),
	}
	reg.MustRegister(m.ApplicationsWatched, m.ImagesWatched, m.ImagesUpdated, m.ImagesErrors, m.RegistryRequests, m.RegistryFailures)
	return m
}

// request counts one registry request.
func (m *Metrics) request(host string, failed bool) {
	m.RegistryRequests.WithLabelValues(host).Inc()
	if failed {
		m.RegistryFailures.WithLabelValues(host).Inc()
	}
}
