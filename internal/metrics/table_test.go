package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestCounterTable: series are exposed as a CounterVec's would be, and
// label values a CounterVec refuses are refused without counting.
func TestCounterTable(t *testing.T) {
	c := newCounterTable("capstan_test_total", "Counts.", "name", "verb")
	for _, tc := range []struct {
		values []string
		ok     bool
	}{
		{[]string{"a", "Get"}, true},
		{[]string{"a", "Get"}, true},
		{[]string{"b", ""}, true},
		{[]string{"", "Patch"}, true},
		{[]string{"bad\xff", "Get"}, false},
		{[]string{"a"}, false},
	} {
		if err := c.Inc(tc.values...); (err == nil) != tc.ok {
			t.Errorf("Inc(%q) = %v, want ok %v", tc.values, err, tc.ok)
		}
	}
	want := `
# HELP capstan_test_total Counts.
# TYPE capstan_test_total counter
capstan_test_total{name="",verb="Patch"} 1
capstan_test_total{name="a",verb="Get"} 2
capstan_test_total{name="b",verb=""} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if got := c.value("a", "Get"); got != 2 {
		t.Errorf("value = %v, want 2", got)
	}
}
