package applicationset

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestWorkqueueBackoff: an ApplicationSet that keeps failing waits longer
// each time, by the factor, up to the longest wait; the waits start over
// after the cool-down; without a cool-down every retry waits BaseDelay.
func TestWorkqueueBackoff(t *testing.T) {
	item := reconcile.Request{}
	item.Name = "shop"
	l := DefaultWorkqueueRateLimit()
	l.BaseDelay, l.MaxDelay, l.BackoffFactor, l.FailureCoolDown = 10*time.Millisecond, 50*time.Millisecond, 2, time.Hour
	b := &backoff{limit: l, failures: map[reconcile.Request]failures{}}
	var got []time.Duration
	for range 5 {
		got = append(got, b.When(item))
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
	if b.NumRequeues(item) != 5 {
		t.Errorf("%d requeues, want 5", b.NumRequeues(item))
	}
	b.limit.FailureCoolDown = time.Nanosecond // the last failure is long past
	time.Sleep(time.Millisecond)
	if w := b.When(item); w != 10*time.Millisecond {
		t.Errorf("after the cool-down: %v, want the base delay", w)
	}
	b.Forget(item)
	b.limit.FailureCoolDown = 0
	for range 3 {
		if w := b.When(item); w != 10*time.Millisecond {
			t.Errorf("without a cool-down: %v, want the base delay each time", w)
		}
	}
}
