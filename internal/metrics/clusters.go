package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	clusterInfoDesc = prometheus.NewDesc("argocd_cluster_info", "Information about cluster.",
		[]string{"server", "k8s_version", "name"}, nil)
	clusterConnectionDesc = prometheus.NewDesc("argocd_cluster_connection_status", "The k8s cluster current connection status.",
		[]string{"server", "k8s_version"}, nil)
	clusterObjectsDesc = prometheus.NewDesc("argocd_cluster_api_resource_objects", "Number of k8s resource objects in the cache.",
		[]string{"server"}, nil)
	clusterAPIsDesc = prometheus.NewDesc("argocd_cluster_api_resources", "Number of monitored kubernetes API resources.",
		[]string{"server"}, nil)
	clusterCacheAgeDesc = prometheus.NewDesc("argocd_cluster_cache_age_seconds", "Cluster cache age in seconds.",
		[]string{"server"}, nil)
)

// clock tells the cluster collector the time; tests pin it.
var clock = time.Now

// clusterCollector computes the argocd_cluster_* gauges at scrape time.
type clusterCollector struct {
	stats  ClusterStats
	labels *labelsMetric // Options.ClusterLabels; nil without
}

func newClusterCollector(stats ClusterStats, labels []string) *clusterCollector {
	return &clusterCollector{stats: stats,
		labels: newLabelsMetric("argocd_cluster_labels", "Argo Cluster labels converted to Prometheus labels", []string{"server", "name"}, labels)}
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterInfoDesc
	ch <- clusterConnectionDesc
	ch <- clusterObjectsDesc
	ch <- clusterAPIsDesc
	ch <- clusterCacheAgeDesc
	if c.labels != nil {
		ch <- c.labels.desc
	}
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	now := clock()
	seen := map[string]bool{}
	for _, cl := range c.stats.ClusterObjectCounts() {
		if seen[cl.Server] {
			continue // one series per server; a second would fail the scrape
		}
		seen[cl.Server] = true
		age := -1.0
		if !cl.SyncedAt.IsZero() {
			age = float64(int64(now.Sub(cl.SyncedAt).Seconds())) // whole seconds, as Argo CD
		}
		if cl.VersionKnown {
			connected := 0.0
			if cl.Connected {
				connected = 1
			}
			ch <- gauge(clusterInfoDesc, 1, cl.Server, cl.Version, cl.Name)
			ch <- gauge(clusterConnectionDesc, connected, cl.Server, cl.Version)
		}
		ch <- gauge(clusterObjectsDesc, float64(cl.Objects), cl.Server)
		ch <- gauge(clusterAPIsDesc, float64(cl.APIs), cl.Server)
		ch <- gauge(clusterCacheAgeDesc, age, cl.Server)
		if c.labels != nil {
			ch <- c.labels.sample(cl.Labels, cl.Server, cl.Name)
		}
	}
}
