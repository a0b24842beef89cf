package controller

import (
	"context"
	"testing"

	"golang.org/x/sync/semaphore"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestHydrationWaitsForATurn: with every hydration processor busy
// (--hydration-processors), an Application's hydration is put off and
// tried again soon, recording nothing (and a refresh asked for is kept).
func TestHydrationWaitsForATurn(t *testing.T) {
	turns := semaphore.NewWeighted(1)
	r := &reconciler{opts: Options{Hydrator: &HydratorOptions{Processors: 1, turns: turns}}}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{
		DrySource: v1alpha1.DrySource{RepoURL: "https://git.example/dry.git", Path: "dry"}}}}
	if !turns.TryAcquire(1) {
		t.Fatal("the only turn is taken already")
	}
	h := r.hydrate(context.Background(), app)
	if h.pushed || !h.putOff || h.retry != hydrateTurnRetry || app.Status.SourceHydrator.CurrentOperation != nil {
		t.Errorf("without a turn: %+v, operation %+v", h, app.Status.SourceHydrator.CurrentOperation)
	}
}
