package metrics

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

var (
	appInfoDesc = prometheus.NewDesc("argocd_app_info", "Information about application.",
		[]string{"namespace", "name", "project", "autosync_enabled", "repo", "dest_server", "dest_namespace", "sync_status", "health_status", "operation"}, nil)
	appConditionDesc = prometheus.NewDesc("argocd_app_condition", "Report application conditions.",
		[]string{"namespace", "name", "project", "condition"}, nil)
	orphansDesc = prometheus.NewDesc("argocd_app_orphaned_resources_count", "Number of orphaned resources per application",
		[]string{"namespace", "name", "project"}, nil)
)

// appCollector computes argocd_app_info, argocd_app_condition and
// argocd_app_labels from the Applications at scrape time, so deleted
// Applications leave no series.
type appCollector struct {
	apps       AppLister
	orphans    *orphanCounts
	labels     *labelsMetric // Options.AppLabels; nil without
	conditions []string      // Options.AppConditions; none: every type
}

func newAppCollector(apps AppLister, orphans *orphanCounts, opts Options) *appCollector {
	return &appCollector{apps: apps, orphans: orphans, conditions: opts.AppConditions,
		labels: newLabelsMetric("argocd_app_labels", "Argo Application labels converted to Prometheus labels.",
			[]string{"namespace", "name", "project"}, opts.AppLabels)}
}

// labelsMetric is a gauge of 1 per object with some of the object's
// Kubernetes labels as Prometheus labels (argocd_app_labels,
// argocd_cluster_labels, argocd_appset_labels).
type labelsMetric struct {
	desc  *prometheus.Desc
	names []string // the Kubernetes labels exported
}

// newLabelsMetric describes a metric of the fixed labels and one
// label_<name> per name, with characters Prometheus does not allow in a
// label name made "_", as Argo CD names them; nil without names.
func newLabelsMetric(name, help string, fixed, names []string) *labelsMetric {
	if len(names) == 0 {
		return nil
	}
	labels := slices.Clone(fixed)
	for _, l := range names {
		labels = append(labels, "label_"+invalidLabelChars.ReplaceAllString(l, "_"))
	}
	return &labelsMetric{desc: prometheus.NewDesc(name, help, labels, nil), names: names}
}

// sample is the metric of an object of those labels, with the fixed
// labels' values.
func (m *labelsMetric) sample(labels map[string]string, fixed ...string) prometheus.Metric {
	values := fixed
	for _, l := range m.names {
		values = append(values, labels[l])
	}
	return gauge(m.desc, 1, values...)
}

// invalidLabelChars are the characters Prometheus does not allow in a
// label name.
var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

func (c *appCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- appInfoDesc
	ch <- appConditionDesc
	ch <- orphansDesc
	if c.labels != nil {
		ch <- c.labels.desc
	}
}

func (c *appCollector) Collect(ch chan<- prometheus.Metric) {
	apps := c.apps.ListApplications()
	orphans := c.orphans.keep(apps)
	for _, app := range apps {
		proj := project(app)
		if n, ok := orphans[orphanKey(app)]; ok {
			ch <- gauge(orphansDesc, float64(n), app.Namespace, app.Name, proj)
		}
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
		if c.labels != nil {
			ch <- c.labels.sample(app.Labels, app.Namespace, app.Name, proj)
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

// orphanCounts are the Applications' orphaned resource counts, as the
// controller last found them.
type orphanCounts struct {
	mu    sync.Mutex
	byApp map[string]int // by orphanKey
}

func orphanKey(app *v1alpha1.Application) string { return app.Namespace + "/" + app.Name }

func (o *orphanCounts) set(app *v1alpha1.Application, n int) {
	o.mu.Lock()
	o.byApp[orphanKey(app)] = n
	o.mu.Unlock()
}

// keep forgets the counts of Applications not among apps and returns a
// copy of the others'.
func (o *orphanCounts) keep(apps []*v1alpha1.Application) map[string]int {
	present := make(map[string]bool, len(apps))
	for _, app := range apps {
		present[orphanKey(app)] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]int, len(o.byApp))
	for k, n := range o.byApp {
		if !present[k] {
			delete(o.byApp, k)
			continue
		}
		out[k] = n
	}
	return out
}
