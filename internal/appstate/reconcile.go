package appstate

import (
	"context"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
)

// Reconciled is what a reconcile finds of an Application: its sync status
// against the revisions its sources resolve to now, its health, and why a
// comparison could not be made.
type Reconciled struct {
	Sync       v1alpha1.SyncStatus
	Health     v1alpha1.HealthStatusCode
	Conditions []v1alpha1.ApplicationCondition
}

// Reconcile renders the app's sources and compares them with the live
// state as the controller does, but records nothing: Argo CD's admin app
// get-reconcile-results --refresh. A source that cannot be rendered or
// compared gives a ComparisonError condition and an Unknown sync status
// and health, as the app's status would show.
func (r *Reader) Reconcile(ctx context.Context, app *v1alpha1.Application) *Reconciled {
	out := &Reconciled{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeUnknown, ComparedTo: comparedTo(app)},
		Health: v1alpha1.HealthStatusUnknown}
	resp, err := r.Manifests(ctx, app, nil)
	var cmp *engine.Comparison
	if err == nil {
		cmp, _, err = r.comparison(ctx, app, resp.Objects, false)
	}
	if err != nil {
		out.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionComparisonError, Message: err.Error()}}
		return out
	}
	out.Sync.Status, out.Health = cmp.Sync, cmp.Health
	if len(app.Spec.Sources) > 0 {
		for _, s := range resp.Sources {
			out.Sync.Revisions = append(out.Sync.Revisions, s.Revision)
		}
	} else if len(resp.Sources) == 1 {
		out.Sync.Revision = resp.Sources[0].Revision
	}
	return out
}

// comparedTo is the source and destination a comparison of app uses.
func comparedTo(app *v1alpha1.Application) v1alpha1.ComparedTo {
	c := v1alpha1.ComparedTo{Destination: app.Spec.Destination, IgnoreDifferences: app.Spec.IgnoreDifferences}
	if len(app.Spec.Sources) > 0 {
		c.Sources = app.Spec.Sources
	} else if src := app.Spec.SingleSource(); src != nil {
		c.Source = *src
	}
	return c
}
