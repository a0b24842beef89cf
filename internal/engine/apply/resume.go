package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// errCheckpoint interrupts a sync whose progress could not be recorded:
// going on could run a hook whose run a restart would not know of.
var errCheckpoint = errors.New("recording the sync's progress")

// resultKey identifies one task's result: the object and the phase it ran in.
type resultKey struct {
	group, kind, namespace, name string
	phase                        v1alpha1.SyncPhase
}

func keyOf(rr *v1alpha1.ResourceResult) resultKey {
	return resultKey{rr.Group, rr.Kind, rr.Namespace, rr.Name, rr.SyncPhase}
}

// done returns what an earlier run of the operation recorded for the
// task whose result is rr, or nil.
func (r *Request) done(rr *v1alpha1.ResourceResult) *v1alpha1.ResourceResult {
	want := keyOf(rr)
	for _, d := range r.Done {
		if d != nil && keyOf(d) == want {
			return d
		}
	}
	return nil
}

// checkpoint offers the results so far to the Request's Checkpoint, which
// may skip the write; an error there only delays the record.
func (a *Applier) checkpoint(ctx context.Context, req *Request, res *Result) {
	if req.Checkpoint != nil && !req.DryRun {
		_ = req.Checkpoint(ctx, res, false)
	}
}

// forceCheckpoint records the results so far, or interrupts the sync.
func (a *Applier) forceCheckpoint(ctx context.Context, req *Request, res *Result) error {
	if req.Checkpoint == nil || req.DryRun {
		return nil
	}
	if err := req.Checkpoint(ctx, res, true); err != nil {
		return fmt.Errorf("%w: %w", errCheckpoint, err)
	}
	return nil
}
