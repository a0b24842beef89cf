package server

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// BenchmarkListApplications measures what a dashboard full of users costs:
// 50 concurrent GET /api/v1/applications over 500 Applications (and one
// at a time), whole, with the web UI's field selection, and the first
// page of 100 (limit, continue), against a real API server, with the
// server reading through its informer cache as `capstan server` does. It
// reports the latencies' p50 and p99.
//
//	go test ./internal/server -run '^$' -bench ListApplications -benchtime 20x
func BenchmarkListApplications(b *testing.B) {
	localcluster.Need(b)
	const concurrent = 50
	bs := startBenchServer(b, *benchApps)
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: concurrent}}
	fields := "fields=metadata.resourceVersion,metadata.continue," + uiListFields("items.")
	for _, c := range []struct {
		name, query string
		concurrent  int
	}{
		{"whole", "", concurrent},
		{"ui-fields", "?" + fields, concurrent},
		{"whole-alone", "", 1},
		{"ui-fields-alone", "?" + fields, 1},
		{"page-of-100", "?limit=100&" + fields, concurrent},
		{"page-of-100-alone", "?limit=100&" + fields, 1},
	} {
		b.Run(c.name, func(b *testing.B) { benchmarkList(b, hc, bs, c.query, c.concurrent) })
	}
}

// uiListFields is the field selection Argo CD's web UI asks for with its
// list of Applications and its stream, each path after prefix.
func uiListFields(prefix string) string {
	var out []string
	for _, f := range []string{"metadata.name", "metadata.namespace", "metadata.annotations", "metadata.labels",
		"metadata.creationTimestamp", "metadata.deletionTimestamp", "spec.destination", "spec.project", "spec.source",
		"spec.sources", "spec.sourceHydrator", "spec.syncPolicy", "operation.sync", "status.sourceHydrator", "status.summary",
		"status.sync.status", "status.sync.revision", "status.health", "status.operationState.phase",
		"status.operationState.startedAt", "status.operationState.finishedAt"} {
		out = append(out, prefix+f)
	}
	return strings.Join(out, ",")
}

// benchApps is how many Applications the API benchmarks create.
var benchApps = flag.Int("bench.apps", 500, "Applications the API benchmarks create (-args -bench.apps=10000)")

// benchApp is the i-th Application of the API benchmarks.
func benchApp(ns string, i int) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: ns}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: fmt.Sprintf("apps/%05d", i), TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: fmt.Sprintf("team-%d", i%20)},
	}}
}

// benchServer is an API server over a namespace of Applications, reading
// them through its informer cache as `capstan server` does.
type benchServer struct {
	srv         *Server
	base, token string
	ns          string
	direct      client.Client
}

func startBenchServer(b *testing.B, apps int) *benchServer {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		b.Fatal(err)
	}
	ns := kubeCluster.NewNamespace(b)
	direct, err := kube.NewClient(kubeCluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := direct.Create(ctx, benchApp(ns, i)); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range apps {
		work <- i
	}
	close(work)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	cached, informers, err := kube.NewCachedClient(ctx, kubeCluster.Config, ns)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(ctx, Options{Client: cached, Informers: informers, Config: kubeCluster.Config, Namespace: ns, Insecure: true,
		Renderer: repo.NewService(repo.Options{Root: b.TempDir()})})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, l) }()
	token, err := srv.sessions.Create("admin", time.Hour, "")
	if err != nil {
		b.Fatal(err)
	}
	return &benchServer{srv: srv, base: "http://" + l.Addr().String(), token: token, ns: ns, direct: direct}
}

// benchmarkList times GET /api/v1/applications<query>, concurrent at a
// time, and reports the latencies' p50 and p99.
func benchmarkList(b *testing.B, hc *http.Client, bs *benchServer, query string, concurrent int) {
	get := func() (time.Duration, error) {
		req, _ := http.NewRequest("GET", bs.base+"/api/v1/applications"+query, nil)
		req.Header.Set("Authorization", "Bearer "+bs.token)
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), nil
	}
	if _, err := get(); err != nil { // warm the cache
		b.Fatal(err)
	}
	var latencies []time.Duration
	var mu sync.Mutex
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		var wg sync.WaitGroup
		for range concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := get()
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
}
