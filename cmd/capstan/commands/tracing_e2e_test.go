package commands

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/otlpcollector"
	"github.com/capstan-cd/capstan/internal/tracing"
)

// TestTracesReachAnOTLPCollector: with an OTLP address, as --otlp-address
// gives the components, a local collector receives spans of the
// controller's reconciles, the repo server's renders and the API server's
// calls.
func TestTracesReachAnOTLPCollector(t *testing.T) {
	localcluster.Need(t)
	collector := otlpcollector.Start(t)
	ctx := context.Background()
	stop, err := tracing.Start(ctx, tracing.Options{Service: "capstan", Address: collector.Addr, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	f := startCapstan(t, true)
	f.login()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	f.expect(0, "app", "create", "traced", "--repo", remote.URL, "--path", "app", "--dest-server", "https://kubernetes.default.svc",
		"--dest-namespace", dest, "--sync-policy", "automated")
	f.expect(0, "app", "wait", "traced", "--timeout", "60")
	// Spans are exported in batches each second while the provider runs:
	// a reconcile may end after the app is seen synced (the sync runs in
	// it), so the collector is watched before the provider stops.
	want := map[string]bool{"reconcile": false, "render": false, "POST /api/v1/applications": false}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range collector.Spans() {
			if _, ok := want[s.Name]; ok && s.Service == "capstan" && (s.Name != "reconcile" || s.Attrs["application"] == f.ns+"/traced") {
				want[s.Name] = true
			}
		}
		if !slices.Contains(valuesOf(want), false) {
			if err := stop(ctx); err != nil { // flushes what is left
				t.Fatal(err)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("spans not received: %v (of %d received: %+v)", want, len(collector.Spans()), collector.Spans())
}

func valuesOf(m map[string]bool) []bool {
	out := make([]bool, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
