package server

import (
	"testing"
	"time"
)

// BenchmarkWebhookToSync measures, as capstan run wires it, the time from
// a GitHub push webhook reaching the API server to the Application being
// Synced at the pushed commit: the controller has found the commit,
// synced it and recorded the result, so the sync started sooner still.
// Each iteration pushes one commit.
//
//	go test ./internal/server -run '^$' -bench WebhookToSync -benchtime 20x
func BenchmarkWebhookToSync(b *testing.B) {
	rig := newWebhookRig(b)
	var toSynced time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		rev := rig.commit()
		b.StartTimer()
		received := time.Now()
		rig.webhook()
		rig.waitSynced(rev)
		toSynced += time.Since(received)
	}
	b.ReportMetric(float64(toSynced.Milliseconds())/float64(b.N), "ms-to-synced/op")
}
