package controller

import (
	"sync"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// repoGrace hides, for a while, a failure to render an Application's
// sources that had compared fine: the last comparison stands while a Git
// server or registry hiccups, rather than every Application turning
// Unknown (Argo CD's controller.repo.error.grace.period.seconds). A
// refresh, or a failure outlasting the period, shows the error.
type repoGrace struct {
	period time.Duration
	// since is when each Application's render first failed, by app key.
	since sync.Map
}

// hide reports whether the failure to render app, now, stays hidden.
// renderFailed is whether the failure was a render on an ordinary
// reconcile (compareRendering).
func (g *repoGrace) hide(key string, app *v1alpha1.Application, renderFailed bool, now time.Time) bool {
	if !renderFailed {
		g.since.Delete(key)
		return false
	}
	if g.period <= 0 || app.Operation != nil || !comparedFine(app) {
		return false
	}
	first, _ := g.since.LoadOrStore(key, now)
	return now.Sub(first.(time.Time)) < g.period
}

// comparedFine reports whether app's recorded state is a comparison
// (not Unknown, and no comparison error standing).
func comparedFine(app *v1alpha1.Application) bool {
	switch app.Status.Sync.Status {
	case v1alpha1.SyncStatusCodeSynced, v1alpha1.SyncStatusCodeOutOfSync:
	default:
		return false
	}
	for _, c := range app.Status.Conditions {
		if c.Type == v1alpha1.ApplicationConditionComparisonError {
			return false
		}
	}
	return true
}
