package server

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"flag"
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchFollowers is how many more Applications follow the repository in
// BenchmarkWebhookToSync's second run.
var benchFollowers = flag.Int("bench.followers", 1000, "Applications following the repository beside the measured one (BenchmarkWebhookToSync)")

// BenchmarkWebhookToSync measures, as capstan run wires it, the time from
// a GitHub push webhook reaching the API server to the Application being
// Synced at the pushed commit: the controller has found the commit,
// synced it and recorded the result, so the sync started sooner still.
// Each iteration pushes one commit. It runs alone and with
// -bench.followers more Applications following the repository (each with
// a manifest-generate-paths annotation its push does not touch), and
// reports the mean and the 99th percentile.
//
//	go test ./internal/server -run '^$' -bench WebhookToSync -benchtime 20x
func BenchmarkWebhookToSync(b *testing.B) {
	localcluster.Need(b)
	for _, followers := range []int{0, *benchFollowers} {
		b.Run(fmt.Sprintf("followers=%d", followers), func(b *testing.B) {
			rig := newWebhookRigWith(b, followers)
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				rev := rig.commit()
				b.StartTimer()
				received := time.Now()
				rig.webhook()
				rig.waitSynced(rev)
				times = append(times, time.Since(received))
			}
			b.StopTimer()
			slices.Sort(times)
			var total time.Duration
			for _, d := range times {
				total += d
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(len(times)), "ms-to-synced/op")
			// The 99th percentile by nearest rank: of 100 runs, the second
			// slowest; the slowest is reported on its own.
			p99 := times[(len(times)*99+99)/100-1]
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms")
		})
	}
}
