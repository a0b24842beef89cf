// Package metricscrape reads a component's Prometheus /metrics in tests:
// a free local address to serve them on, and a wait until the page holds
// the samples a test expects.
package metricscrape

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// Addr is a local address nothing listens on, for a component's /metrics.
func Addr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Until scrapes http://addr/metrics until the page holds every want (a
// line, or the start of one); the test fails with the first one missing.
func Until(t testing.TB, addr string, want ...string) {
	t.Helper()
	eventually.String(t, "the metrics at "+addr, func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return err.Error()
		}
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				return "no " + w
			}
		}
		return ""
	})
}
