package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// progressiveSync are the metrics of ApplicationSets' RollingSync, under
// Argo CD's names:
//
//	argocd_appset_progressive_sync_app_status{namespace, name, step, progressiveStatus}  gauge, Applications per step and state
//	argocd_appset_progressive_sync_syncs_triggered_total{namespace, name, step}  counter
//	argocd_appset_progressive_sync_detection_to_trigger_seconds{namespace, name}  histogram
type progressiveSync struct {
	status    *prometheus.GaugeVec
	triggered *prometheus.CounterVec
	toTrigger *prometheus.HistogramVec
}

func newProgressiveSync() *progressiveSync {
	return &progressiveSync{
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "argocd_appset_progressive_sync_app_status",
			Help: "Count of apps per status (Waiting/Pending/Progressing/Healthy) per step"}, []string{"namespace", "name", "step", "progressiveStatus"}),
		triggered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_appset_progressive_sync_syncs_triggered_total",
			Help: "Counts sync operations triggered by progressive sync"}, []string{"namespace", "name", "step"}),
		toTrigger: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_appset_progressive_sync_detection_to_trigger_seconds",
			Help:    "Time between detecting applications to sync and triggering their sync during a progressive sync wave",
			Buckets: []float64{0.05, 0.1, 0.15, 0.5, 1, 5}}, []string{"namespace", "name"}),
	}
}

func (p *progressiveSync) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.status, p.triggered, p.toTrigger}
}

// RolloutStatus records how many of the ApplicationSet's Applications
// are in each step and state, as its status.applicationStatus says.
func (a *AppSets) RolloutStatus(as *v1alpha1.ApplicationSet) {
	a.progressive.status.DeletePartialMatch(prometheus.Labels{"namespace": as.Namespace, "name": as.Name})
	counts := map[[2]string]int{}
	for _, s := range as.Status.ApplicationStatus {
		counts[[2]string{s.Step, s.Status}]++
	}
	for key, n := range counts {
		a.progressive.status.WithLabelValues(as.Namespace, as.Name, key[0], key[1]).Set(float64(n))
	}
}

// RolloutSyncs records the syncs a reconcile asked of the Applications of
// steps (one entry per sync), sinceDetection after it began to look for
// them.
func (a *AppSets) RolloutSyncs(as *v1alpha1.ApplicationSet, steps []string, sinceDetection time.Duration) {
	if len(steps) == 0 {
		return
	}
	for _, step := range steps {
		a.progressive.triggered.WithLabelValues(as.Namespace, as.Name, step).Inc()
	}
	a.progressive.toTrigger.WithLabelValues(as.Namespace, as.Name).Observe(sinceDetection.Seconds())
}
