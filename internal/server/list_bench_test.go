package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
)

// BenchmarkListApplications measures what a dashboard full of users costs:
// 50 concurrent GET /api/v1/applications over 500 Applications, against a
// real API server, with the server reading through its informer cache as
// `capstan server` does. It reports the latencies' p50 and p99.
//
//	go test ./internal/server -run '^$' -bench ListApplications -benchtime 20x
func BenchmarkListApplications(b *testing.B) {
	const apps, concurrent = 500, 50
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		b.Fatal(err)
	}
	ns := kubeCluster.NewNamespace(b)
	direct, err := kube.NewClient(kubeCluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	for i := range apps {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Namespace: ns}, Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: fmt.Sprintf("apps/%03d", i), TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: fmt.Sprintf("team-%d", i%20)},
		}}
		if err := direct.Create(ctx, app); err != nil {
			b.Fatal(err)
		}
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
	base := "http://" + l.Addr().String()
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: concurrent}}
	token, err := srv.sessions.Create("admin", time.Hour, "")
	if err != nil {
		b.Fatal(err)
	}
	get := func() (time.Duration, error) {
		req, _ := http.NewRequest("GET", base+"/api/v1/applications", nil)
		req.Header.Set("Authorization", "Bearer "+token)
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
