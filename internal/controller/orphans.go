package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/project"
)

// orphans counts the orphaned resources (project.IsOrphan) in the
// Application's destination namespace, when its project monitors them
// (spec.orphanedResources). A negative count means monitoring is off.
func (r *reconciler) orphans(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, dest *engine.Destination) (int, error) {
	ns := app.Spec.Destination.Namespace
	if !project.MonitorsOrphans(proj) || ns == "" {
		return -1, nil
	}
	cache, err := dest.Live()
	if err != nil {
		return 0, err
	}
	kinds, err := cache.NamespacedKinds()
	if err != nil {
		return 0, err
	}
	for _, gvk := range kinds {
		if !project.OrphanKind(gvk.GroupKind()) {
			continue
		}
		if err := cache.Watch(ctx, gvk); err != nil {
			var restricted *live.RestrictedError
			if errors.As(err, &restricted) {
				continue // not visible to the controller (resource.respectRBAC): not counted
			}
			return 0, fmt.Errorf("watching %s for orphaned resources: %w", gvk.Kind, err)
		}
	}
	n := 0
	for _, obj := range cache.InNamespace(ns) {
		if project.IsOrphan(proj, obj, tracking.App(r.tracking, obj)) {
			n++
		}
	}
	return n, nil
}

// orphanWarning is the condition for n orphaned resources, if the project
// asks for warnings (warn defaults to true).
func orphanWarning(proj *v1alpha1.AppProject, n int) *v1alpha1.ApplicationCondition {
	s := proj.Spec.OrphanedResources
	if n <= 0 || s == nil || (s.Warn != nil && !*s.Warn) {
		return nil
	}
	return &v1alpha1.ApplicationCondition{Type: v1alpha1.ApplicationConditionOrphanedResourceWarning, Message: fmt.Sprintf("Application has %d orphaned resources", n)}
}
