package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// BenchmarkApplicationStreams measures a dashboard full of open pages:
// 100 streams of the Applications opened as the web UI opens them (its
// field selection, from the version of a list; one of them never
// reading), then 1,000 changes to random Applications. It reports how
// long after the last write every reading stream had seen every app's
// last change, the writes' own time, and the live heap of the process
// (the server, its cache and the bench's readers).
//
//	go test ./internal/server -run '^$' -bench ApplicationStreams -benchtime 1x [-args -bench.apps=10000]
func BenchmarkApplicationStreams(b *testing.B) {
	localcluster.Need(b)
	const streams, changes = 100, 1000
	bs := startBenchServer(b, *benchApps)
	f := &fixture{t: b, c: bs.direct, ns: bs.ns, srv: bs.srv, base: bs.base, client: &http.Client{Timeout: time.Minute}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// As the web UI: the list first, then the stream from its version.
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	f.call("GET", "/api/v1/applications?fields=metadata.resourceVersion,"+uiListFields("items."), "", bs.token, &list)
	path := "/api/v1/stream/applications?resourceVersion=" + list.Metadata.ResourceVersion +
		"&fields=result.type,result.application.metadata.annotations," + uiListFields("result.application.")
	stalled := f.openStream(b, ctx, path, bs.token)
	defer stalled.Body.Close()
	var readers []*streamReader
	for range streams - 1 {
		readers = append(readers, f.readStream(b, ctx, path, bs.token))
	}
	var seen, writes []time.Duration
	b.ResetTimer()
	for round := range b.N {
		last := map[string]string{}
		start := time.Now()
		for i := range changes {
			name := benchApp(bs.ns, (i*7919+round)%*benchApps).Name
			value := fmt.Sprintf("%d-%d", round, i)
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"round":%q}}}`, value)
			if err := bs.direct.Patch(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: bs.ns}},
				client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				b.Fatal(err)
			}
			last[name] = value
		}
		wrote := time.Now()
		writes = append(writes, wrote.Sub(start))
		for i, r := range readers {
			for !r.sawEach(last) {
				if time.Since(wrote) > time.Minute {
					b.Fatalf("reading stream %d did not see every change within a minute: %s", i, r.missing(last))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		seen = append(seen, time.Since(wrote))
	}
	b.StopTimer()
	sort.Slice(seen, func(i, j int) bool { return seen[i] < seen[j] })
	runtime.GC() // what is live, not what awaits collection
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.ReportMetric(float64(seen[len(seen)/2].Milliseconds()), "all-seen-after-last-write-ms")
	b.ReportMetric(float64(writes[len(writes)/2].Milliseconds()), "writes-ms")
	b.ReportMetric(float64(mem.HeapInuse>>20), "heap-MiB")
	b.ReportMetric(float64(bs.srv.feeds.following()), "own-informers")
}
