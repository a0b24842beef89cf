package controller

import (
	"testing"
	"time"
)

// TestNextResync: the periodic refreshes spread over [resync,
// resync+jitter), as argocd-cm's timeout.reconciliation.jitter asks; no
// jitter keeps them at resync.
func TestNextResync(t *testing.T) {
	if got := nextResync(2*time.Minute, 0); got != 2*time.Minute {
		t.Errorf("without jitter: %v", got)
	}
	seen := map[time.Duration]bool{}
	for range 200 {
		got := nextResync(2*time.Minute, time.Minute)
		if got < 2*time.Minute || got >= 3*time.Minute {
			t.Fatalf("%v is outside [2m, 3m)", got)
		}
		seen[got.Truncate(10*time.Second)] = true
	}
	if len(seen) < 4 {
		t.Errorf("200 refreshes fell in %d ten-second slots: not spread", len(seen))
	}
}
