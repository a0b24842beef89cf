package controller

import (
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// SelfHealBackoff spaces the self-heal syncs of one revision, as Argo
// CD's --self-heal-backoff-* flags: the first self-heal sync runs at
// once; after the n-th (n ≥ 1), the next waits Initial·Factor^(n-1),
// at most Cap, from the end of the last one. A new revision starts the
// count again. The zero value never waits.
type SelfHealBackoff struct {
	// Initial is the wait after the first self-heal sync
	// (--self-heal-backoff-timeout-seconds). 0: Fixed applies instead.
	Initial time.Duration
	// Factor multiplies the wait after each further one
	// (--self-heal-backoff-factor). Default 1: no growth.
	Factor float64
	// Cap bounds the wait (--self-heal-backoff-cap-seconds). 0: none.
	Cap time.Duration
	// Fixed is the wait after any self-heal sync when Initial is 0
	// (--self-heal-timeout-seconds). 0: none.
	Fixed time.Duration
}

// delay is the wait after the n-th self-heal sync in a row.
func (b SelfHealBackoff) delay(n int64) time.Duration {
	switch {
	case n == 0:
		return 0
	case b.Initial <= 0:
		return b.Fixed
	}
	factor := max(b.Factor, 1)
	d := float64(b.Initial)
	for i := int64(1); i < n && (b.Cap <= 0 || d < float64(b.Cap)); i++ {
		d *= factor
	}
	if b.Cap > 0 && d > float64(b.Cap) {
		return b.Cap
	}
	return time.Duration(d)
}

// remaining is how long the next self-heal sync of st's revision must
// still wait, given the self-heal syncs of it so far; 0 or less: none.
func (b SelfHealBackoff) remaining(st *v1alpha1.OperationState, now time.Time) time.Duration {
	if st == nil || st.Operation.Sync == nil {
		return 0
	}
	wait := b.delay(st.Operation.Sync.SelfHealAttemptsCount)
	if st.FinishedAt != nil {
		wait -= now.Sub(st.FinishedAt.Time)
	}
	return wait
}
