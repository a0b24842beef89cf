package chaos

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// convergeTimeout bounds how long a revision may take to converge after a
// fault: a restart, a fetch, four syncs (one with four waves).
const convergeTimeout = 3 * time.Minute

// TestKilledMidSync pushes revision after revision, each changing a
// hooked, a waved, a pruning and a plain Application, and kills the
// Capstan process (SIGKILL) at a random moment of their syncs, then starts
// it again. Every revision must converge: synced, nothing pruned that Git
// declares, no operation left, one history entry per revision, and the
// hook run exactly once per revision.
func TestKilledMidSync(t *testing.T) {
	localcluster.Need(t)
	rng := newRand(t)
	r := newRig(t)
	c := newCapstan(t, r.ns)
	c.start()
	r.waitConverged(convergeTimeout)
	midSync := 0
	for i := 1; i <= *iterations; i++ {
		r.commit()
		// The syncs start within about a second (the repository poll) and
		// all four are done about two seconds later: kill in that span,
		// and now and then again while the restarted process resumes.
		kills := 1 + rng.IntN(2)
		var at []string
		for k := range kills {
			delay := time.Duration(rng.Int64N(int64(3 * time.Second)))
			if k > 0 {
				delay = time.Duration(rng.Int64N(int64(2 * time.Second)))
			}
			time.Sleep(delay) // the kill lands at a random point of the syncs
			pending := r.converged(context.Background())
			c.kill()
			if pending != "" {
				midSync++
			}
			at = append(at, fmt.Sprintf("%s (%s)", delay.Round(time.Millisecond), map[bool]string{true: "mid-sync", false: "idle"}[pending != ""]))
			if rng.IntN(3) == 0 {
				time.Sleep(time.Duration(rng.Int64N(int64(2 * time.Second)))) // sometimes a while down
			}
			c.start()
		}
		started := time.Now()
		r.waitConverged(convergeTimeout)
		t.Logf("iteration %d: killed at %s, converged %s after the restart", i, strings.Join(at, ", then "), time.Since(started).Round(time.Millisecond))
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of the kills landed mid-sync", midSync)
	syncs := *iterations + 1
	r.checkHistory(syncs)
	// The last hook Job's watch event may trail its creation a little.
	waitFor(t, fmt.Sprintf("a PreSync hook run for each of %d syncs", syncs), func() error {
		if got := r.hookRuns.Load(); got < int64(syncs) {
			return fmt.Errorf("%d runs", got)
		}
		return nil
	})
	if got := r.hookRuns.Load(); got != int64(syncs) {
		t.Errorf("the PreSync hook ran %d times for %d syncs, want once per sync", got, syncs)
	}
}

// newRand returns the suite's random source, seeded by -chaos.seed or the
// clock, and logs the seed so a failure can be replayed.
func newRand(t *testing.T) *rand.Rand {
	s := *seed
	if s == 0 {
		s = time.Now().UnixNano()
	}
	t.Logf("random seed %d (replay with -args -chaos.seed=%d)", s, s)
	return rand.New(rand.NewPCG(uint64(s), 0))
}
