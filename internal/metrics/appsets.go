package metrics

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

var (
	appSetInfoDesc = prometheus.NewDesc("argocd_appset_info", "Information about applicationset",
		[]string{"namespace", "name", "resource_update_status"}, nil)
	appSetOwnedDesc = prometheus.NewDesc("argocd_appset_owned_applications", "Number of applications owned by the applicationset",
		[]string{"namespace", "name"}, nil)
)

// AppSetLister lists the ApplicationSets the ApplicationSet controller's
// metrics describe, once per scrape; they are only read.
type AppSetLister interface {
	ListApplicationSets() []*v1alpha1.ApplicationSet
}

// AppSets are the ApplicationSet controller's metrics, under Argo CD's
// names:
//
//	argocd_appset_info{namespace, name, resource_update_status}  gauge, 1 per ApplicationSet
//	argocd_appset_owned_applications{namespace, name}  gauge, its status.resources
//	argocd_appset_labels{namespace, name, label_<name>...}  gauge (labels given to NewAppSets)
//	argocd_appset_reconcile{namespace, name}  histogram, seconds
//
// plus the progressive sync metrics of RolloutStatus and RolloutSyncs,
// the GitHub API metrics of GitHubTransport and client-go's
// argocd_kubectl_* request metrics. The ApplicationSets
// are listed at scrape time, so a deleted one leaves no info series.
type AppSets struct {
	lister      atomic.Pointer[AppSetLister]
	labels      *labelsMetric // nil without labels
	reconcile   *prometheus.HistogramVec
	github      *githubAPI
	progressive *progressiveSync
}

// NewAppSets returns the metrics, with argocd_appset_labels for the
// ApplicationSet labels named (--metrics-applicationset-labels). Nothing
// is listed until SetLister.
func NewAppSets(labels []string) *AppSets {
	a := &AppSets{
		labels: newLabelsMetric("argocd_appset_labels", "Applicationset labels translated to Prometheus labels", []string{"namespace", "name"}, labels),
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "argocd_appset_reconcile", Help: "Application reconciliation performance in seconds.",
		}, []string{"namespace", "name"}),
		github:      newGitHubAPI(),
		progressive: newProgressiveSync(),
	}
	return a
}

// SetLister sets what the metrics list at each scrape (a controller that
// starts again brings a new cache).
func (a *AppSets) SetLister(l AppSetLister) { a.lister.Store(&l) }

// Collectors are the collectors to register: the ApplicationSets', and
// client-go's request metrics.
func (a *AppSets) Collectors() []prometheus.Collector {
	own := slices.Concat([]prometheus.Collector{appSetCollector{a}, a.reconcile}, a.github.collectors(), a.progressive.collectors())
	return append(own, kubectlCollectors...)
}

// ObserveReconcile records that reconciling as took d.
func (a *AppSets) ObserveReconcile(as *v1alpha1.ApplicationSet, d time.Duration) {
	a.reconcile.WithLabelValues(as.Namespace, as.Name).Observe(d.Seconds())
}

// appSetCollector computes the per-ApplicationSet gauges at scrape time.
type appSetCollector struct{ a *AppSets }

func (c appSetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- appSetInfoDesc
	ch <- appSetOwnedDesc
	if c.a.labels != nil {
		ch <- c.a.labels.desc
	}
}

func (c appSetCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.a.lister.Load()
	if l == nil {
		return
	}
	for _, as := range (*l).ListApplicationSets() {
		status := "Unknown"
		for _, cond := range as.Status.Conditions {
			if cond.Type == v1alpha1.ApplicationSetConditionResourcesUpToDate {
				status = cond.Reason
			}
		}
		ch <- gauge(appSetInfoDesc, 1, as.Namespace, as.Name, status)
		ch <- gauge(appSetOwnedDesc, float64(len(as.Status.Resources)), as.Namespace, as.Name)
		if c.a.labels != nil {
			ch <- c.a.labels.sample(as.Labels, as.Namespace, as.Name)
		}
	}
}
