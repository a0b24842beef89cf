package metrics

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

var (
	appInfoDesc = prometheus.NewDesc("argocd_app_info", "Information about application.",
		[]string{"namespace", "name", "project", "autosync_enabled", "repo", "dest_server", "dest_namespace", "sync_status", "health_status", "operation"}, nil)
	appConditionDesc = prometheus.NewDesc("argocd_app_condition", "Report application conditions.",
		[]string{"namespace", "name", "project", "condition"}, nil)

	clusterObjectsDesc = prometheus.NewDesc("argocd_cluster_api_resource_objects", "Number of k8s resource objects in the cache.",
		[]string{"server"}, nil)
	clusterAPIsDesc = prometheus.NewDesc("argocd_cluster_api_resources", "Number of monitored kubernetes API resources.",
		[]string{"server"}, nil)
	clusterCacheAgeDesc = prometheus.NewDesc("argocd_cluster_cache_age_seconds", "Cluster cache age in seconds.",
		[]string{"server"}, nil)
)

// appCollector computes argocd_app_info, argocd_app_condition and
// argocd_app_labels from the Applications at scrape time, so deleted
// Applications leave no series.
type appCollector struct {
	apps       AppLister
	labels     []string         // Options.AppLabels
	labelsDesc *prometheus.Desc // nil without labels
	conditions []string         // Options.AppConditions; none: every type
}

func newAppCollector(apps AppLister, opts Options) *appCollector {
	c := &appCollector{apps: apps, labels: opts.AppLabels, conditions: opts.AppConditions}
	if len(c.labels) > 0 {
		names := []string{"namespace", "name", "project"}
		for _, l := range c.labels {
			names = append(names, "label_"+invalidLabelChars.ReplaceAllString(l, "_"))
		}
		c.labelsDesc = prometheus.NewDesc("argocd_app_labels", "Argo Application labels converted to Prometheus labels.", names, nil)
	}
	return c
}

// invalidLabelChars are the characters Prometheus does not allow in a
// label name.
var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func (c *appCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- appInfoDesc
	ch <- appConditionDesc
	if c.labelsDesc != nil {
		ch <- c.labelsDesc
	}
}

func (c *appCollector) Collect(ch chan<- prometheus.Metric) {
	for _, app := range c.apps.ListApplications() {
		proj := project(app)
		ch <- gauge(appInfoDesc, 1,
			app.Namespace, app.Name, proj,
			strconv.FormatBool(autoSync(app)),
			repoLabel(app),
			app.Spec.Destination.Server,
			app.Spec.Destination.Namespace,
			string(orDefault(app.Status.Sync.Status, v1alpha1.SyncStatusCodeUnknown)),
			string(orDefault(app.Status.Health.Status, v1alpha1.HealthStatusUnknown)),
			operation(app),
		)
		if c.labelsDesc != nil {
			values := []string{app.Namespace, app.Name, proj}
			for _, l := range c.labels {
				values = append(values, app.Labels[l])
			}
			ch <- gauge(c.labelsDesc, 1, values...)
		}
		counts := map[v1alpha1.ApplicationConditionType]int{}
		var order []v1alpha1.ApplicationConditionType
		for _, cond := range app.Status.Conditions {
			if len(c.conditions) > 0 && !slices.Contains(c.conditions, string(cond.Type)) {
				continue
			}
			if counts[cond.Type] == 0 {
				order = append(order, cond.Type)
			}
			counts[cond.Type]++
		}
		for _, t := range order {
			ch <- gauge(appConditionDesc, float64(counts[t]), app.Namespace, app.Name, proj, string(t))
		}
	}
}

// autoSync reports whether automated sync is on: spec.syncPolicy.automated
// is set and not disabled by its enabled field (Argo CD 3.1 and later).
func autoSync(app *v1alpha1.Application) bool {
	return app.Spec.SyncPolicy.IsAutomatedSyncEnabled()
}

// operation is "delete" for an Application being deleted, "sync" while a
// sync is requested in app.operation, and "" otherwise.
func operation(app *v1alpha1.Application) string {
	switch {
	case app.DeletionTimestamp != nil:
		return "delete"
	case app.Operation != nil && app.Operation.Sync != nil:
		return "sync"
	}
	return ""
}

// repoLabel is the repository of the Application's first source, normalized
// as Argo CD does it for this label: trimmed, lower case, an scp-like SSH
// address ("git@host:org/repo") written with a slash ("git@host/org/repo"),
// no ".git" suffix, no "ssh://" prefix. Unlike Argo CD it never exports a
// password: credentials of an HTTP(S) URL are dropped.
func repoLabel(app *v1alpha1.Application) string {
	var raw string
	switch {
	case app.Spec.Source != nil:
		raw = app.Spec.Source.RepoURL
	case len(app.Spec.Sources) > 0:
		raw = app.Spec.Sources[0].RepoURL
	}
	s := strings.ToLower(strings.TrimSpace(raw))
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		if at := strings.Index(s, "@"); at > 0 && !strings.ContainsAny(s[:at], "/:") {
			s = "ssh://" + strings.Replace(s, ":", "/", 1)
		}
	}
	s = strings.TrimSuffix(s, ".git")
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	if u.User != nil {
		if u.Scheme == "ssh" {
			u.User = url.User(u.User.Username())
		} else {
			u.User = nil
		}
	}
	return strings.TrimPrefix(u.String(), "ssh://")
}

// gauge is a gauge sample of desc. Label values that are not valid UTF-8
// make it an invalid metric, which fails that one sample of the scrape
// (the handler serves the rest and logs the error) instead of panicking.
func gauge(desc *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return m
}

func orDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

// clock tells the cluster collector the time; tests pin it.
var clock = time.Now

// clusterCollector computes the argocd_cluster_* gauges at scrape time.
type clusterCollector struct {
	stats ClusterStats
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterObjectsDesc
	ch <- clusterAPIsDesc
	ch <- clusterCacheAgeDesc
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
		ch <- gauge(clusterObjectsDesc, float64(cl.Objects), cl.Server)
		ch <- gauge(clusterAPIsDesc, float64(cl.APIs), cl.Server)
		ch <- gauge(clusterCacheAgeDesc, age, cl.Server)
	}
}
