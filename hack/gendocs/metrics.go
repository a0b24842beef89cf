package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/updater"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/notifications"
)

// metric is one metric as a component describes it.
type metric struct {
	name, help, labels, component string
}

// describer is what describes a component's metrics.
type describer interface {
	Describe(ch chan<- *prometheus.Desc)
}

// recorder is a prometheus.Registerer that keeps what it is given.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

func (r *recorder) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range r.collectors {
		c.Describe(ch)
	}
}

// nothing stands in for the application controller's live state.
type nothing struct{}

func (nothing) ListApplications() []*v1alpha1.Application   { return nil }
func (nothing) ClusterObjectCounts() []metrics.ClusterCount { return nil }

// descFields reads a prometheus.Desc's name, help and labels from its
// String form, the only way client_golang shows them.
var descFields = regexp.MustCompile(`fqName: "([^"]*)", help: "((?:[^"\\]|\\.)*)",(?: unit: "[^"]*",)? constLabels: \{[^}]*\}, variableLabels: \{([^}]*)\}`)

// metricsReference lists the metrics each component serves.
func metricsReference() (string, error) {
	images := &recorder{}
	updater.NewMetrics(images)
	components := []struct {
		name string
		d    describer
	}{
		{"application controller (:8082)", metrics.New(nothing{}, nothing{}, metrics.Options{AppLabels: []string{"team"}, ClusterLabels: []string{"env"}})},
		{"ApplicationSet controller (:8080)", &recorder{collectors: metrics.NewAppSets([]string{"team"}).Collectors()}},
		{"API server (:8083)", metrics.NewServer("")},
		{"repo server (:8084)", metrics.NewRepoServer()},
		{"notifications controller (:9001)", notifications.NewMetrics()},
		{"image updater", images},
	}
	var all []metric
	for _, c := range components {
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.d.Describe(ch); close(ch) }()
		for d := range ch {
			m := descFields.FindStringSubmatch(d.String())
			if m == nil {
				return "", fmt.Errorf("cannot read %s", d)
			}
			// argocd_app_labels' own labels are the ones asked for.
			labels := strings.ReplaceAll(m[3], "label_team", "label_<name>...")
			all = append(all, metric{name: m[1], help: strings.ReplaceAll(m[2], `\"`, `"`), labels: labels, component: c.name})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].name < all[j].name })
	var b strings.Builder
	b.WriteString("# Metrics\n\n")
	b.WriteString("Every Prometheus metric Capstan's components serve at `/metrics`, under Argo CD's names where Argo CD has the metric. " +
		"Each component also serves the Go runtime's (`go_*`) and the process's (`process_*`) metrics.\n\n")
	b.WriteString("| Metric | Labels | Component | Meaning |\n|---|---|---|---|\n")
	for _, m := range all {
		labels := "none"
		if m.labels != "" {
			labels = "`" + strings.ReplaceAll(m.labels, ",", "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.name, labels, m.component, cell(m.help))
	}
	b.WriteString("\n## Argo CD metrics Capstan does not serve\n\n| Metric | Why |\n|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(metrics.NotServed)) {
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, cell(metrics.NotServed[name]))
	}
	return b.String(), nil
}
