package applicationset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// deletionPoll is how often a reverse deletion is looked at, besides the
// Applications' own deletion events.
const deletionPoll = 2 * time.Second

// reverseDeletion reports whether an ApplicationSet asks for its
// Applications to be deleted last step first (strategy.deletionOrder:
// Reverse, any case, with a RollingSync strategy).
func reverseDeletion(as *v1alpha1.ApplicationSet) bool {
	return rollingSync(as) && strings.EqualFold(as.Spec.Strategy.DeletionOrder, "Reverse")
}

// holdsForDeletion reports whether the reconciler keeps an ApplicationSet
// (by the resources finalizer) until it has deleted its Applications
// itself: a reverse deletion order while progressive syncs run.
func (r *Reconciler) holdsForDeletion(as *v1alpha1.ApplicationSet) bool {
	return r.ProgressiveSyncs && reverseDeletion(as)
}

// ensureFinalizer adds the resources finalizer to an ApplicationSet the
// reconciler holds for deletion, as Argo CD does, so the garbage collector
// cannot delete its Applications all at once.
func (r *Reconciler) ensureFinalizer(ctx context.Context, as *v1alpha1.ApplicationSet) error {
	if !r.holdsForDeletion(as) || slices.Contains(as.Finalizers, v1alpha1.ResourcesFinalizerName) {
		return nil
	}
	return r.setFinalizers(ctx, as, append(slices.Clone(as.Finalizers), v1alpha1.ResourcesFinalizerName))
}

// Finalize runs when an ApplicationSet is being deleted. One held for
// deletion has its Applications deleted step by step in reverse (the
// Applications of no step last), each step only once the previous one's
// are gone; then, as for any ApplicationSet carrying it, the resources
// finalizer is removed and the garbage collector does the rest. It
// returns how soon to look again while Applications remain.
func (r *Reconciler) Finalize(ctx context.Context, as *v1alpha1.ApplicationSet) (time.Duration, error) {
	if !slices.Contains(as.Finalizers, v1alpha1.ResourcesFinalizerName) {
		return 0, nil
	}
	if r.holdsForDeletion(as) && r.policyOf(as).AllowDelete() {
		owned, _, err := r.liveApps(ctx, as)
		if err != nil {
			return 0, err
		}
		if len(owned) > 0 {
			return deletionPoll, r.deleteNextStep(ctx, as, owned)
		}
	}
	kept := slices.DeleteFunc(slices.Clone(as.Finalizers), func(f string) bool { return f == v1alpha1.ResourcesFinalizerName })
	return 0, r.setFinalizers(ctx, as, kept)
}

// deleteNextStep deletes the Applications of the last step that still has
// some; while any of them is still going, it waits.
func (r *Reconciler) deleteNextStep(ctx context.Context, as *v1alpha1.ApplicationSet, owned map[string]*v1alpha1.Application) error {
	apps := make([]*v1alpha1.Application, 0, len(owned))
	for _, app := range owned {
		apps = append(apps, app)
	}
	ro := &rollout{steps: as.Spec.Strategy.RollingSync.Steps, stepOf: map[string]int{}}
	ro.place(apps)
	now := len(ro.steps) // the group deleted now: the first in deletion order still holding an Application
	for _, app := range apps {
		now = min(now, deletionGroup(ro, app.Name))
	}
	for _, app := range apps {
		if deletionGroup(ro, app.Name) != now || app.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Application/%s/%s (step %s of the reverse deletion): %w", app.Namespace, app.Name, ro.step(app.Name), err)
		}
	}
	return nil
}

// deletionGroup is when an Application goes in a reverse deletion: 0 for
// the last step's, up to the number of steps for those no step selects.
func deletionGroup(ro *rollout, name string) int {
	if i, ok := ro.stepOf[name]; ok {
		return len(ro.steps) - 1 - i
	}
	return len(ro.steps)
}

// setFinalizers writes an ApplicationSet's finalizers, conditional on the
// version read.
func (r *Reconciler) setFinalizers(ctx context.Context, as *v1alpha1.ApplicationSet, finalizers []string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": orEmptyList(finalizers), "resourceVersion": as.ResourceVersion}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, as, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing the finalizers of ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
	}
	return nil
}
