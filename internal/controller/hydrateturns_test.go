package controller

import (
	"context"
	"testing"

	"golang.org/x/sync/semaphore"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestHydrationWaitsForATurn: with every hydration processor busy
// (--hydration-processors), an Application's hydration is put off and
// tried again soon, recording nothing; the turn is never held after.
func TestHydrationWaitsForATurn(t *testing.T) {
	turns := semaphore.NewWeighted(1)
	r := &reconciler{opts: Options{Hydrator: &HydratorOptions{Processors: 1, turns: turns}}}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SourceHydrator: &v1alpha1.SourceHydrator{
		DrySource: v1alpha1.DrySource{RepoURL: "https://git.example/dry.git", Path: "dry"}}}}
	if !turns.TryAcquire(1) {
		t.Fatal("the only turn is taken already")
	}
	pushed, retry := r.hydrate(context.Background(), app)
	if pushed || retry != hydrateTurnRetry || app.Status.SourceHydrator.CurrentOperation != nil {
		t.Errorf("without a turn: pushed %v, retry %v, operation %+v", pushed, retry, app.Status.SourceHydrator.CurrentOperation)
	}
	turns.Release(1)
	if !turns.TryAcquire(1) {
		t.Error("a put-off hydration kept the turn")
	}
}
