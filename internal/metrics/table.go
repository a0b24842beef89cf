package metrics

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// counterTable is a counter with labels, held compactly for the metrics
// with a series per Application (argocd_app_k8s_request_total,
// argocd_app_sync_total): a series is its label values in one string and
// a number, and becomes a Prometheus metric only while a scrape reads it.
// client_golang's CounterVec keeps every series as a metric with its label
// pairs built ahead, ten times the size: at 10,000 Applications that was
// 30 MB of the controller's heap.
type counterTable struct {
	desc   *prometheus.Desc
	labels int

	mu     sync.Mutex
	series map[string]float64 // by label values joined with sep
}

// sep joins label values into a key: the byte 0xff never occurs in valid
// UTF-8, which every label value must be, so keys are unambiguous.
const sep = "\xff"

func newCounterTable(name, help string, labels ...string) *counterTable {
	return &counterTable{
		desc:   prometheus.NewDesc(name, help, labels, nil),
		labels: len(labels),
		series: map[string]float64{},
	}
}

// Inc adds one to the series of values; values that are not valid UTF-8
// or not one per label are refused, and nothing is counted.
func (t *counterTable) Inc(values ...string) error { return t.Add(1, values...) }

// Add adds v to the series of values, refusing values as Inc does.
func (t *counterTable) Add(v float64, values ...string) error {
	if len(values) != t.labels {
		return fmt.Errorf("%s: %d label values for %d labels", t.desc, len(values), t.labels)
	}
	for _, v := range values {
		if !utf8.ValidString(v) {
			return fmt.Errorf("%s: label value %q is not valid UTF-8", t.desc, v)
		}
	}
	key := strings.Join(values, sep)
	t.mu.Lock()
	t.series[key] += v
	t.mu.Unlock()
	return nil
}

// Describe implements prometheus.Collector.
func (t *counterTable) Describe(ch chan<- *prometheus.Desc) { ch <- t.desc }

// Collect implements prometheus.Collector.
func (t *counterTable) Collect(ch chan<- prometheus.Metric) {
	t.mu.Lock()
	out := make([]prometheus.Metric, 0, len(t.series))
	for key, count := range t.series {
		out = append(out, prometheus.MustNewConstMetric(t.desc, prometheus.CounterValue, count, strings.Split(key, sep)...))
	}
	t.mu.Unlock()
	for _, m := range out {
		ch <- m
	}
}

// value is the count of the series of values, 0 if it has none.
func (t *counterTable) value(values ...string) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.series[strings.Join(values, sep)]
}
