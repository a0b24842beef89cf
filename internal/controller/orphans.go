package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/project"
)

// unmonitored are kinds never reported as orphaned: objects the cluster
// itself churns, which Argo CD leaves out of its caches by default.
var unmonitored = map[schema.GroupKind]bool{
	{Group: "", Kind: "Event"}:                                        true,
	{Group: "events.k8s.io", Kind: "Event"}:                           true,
	{Group: "", Kind: "Endpoints"}:                                    true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:                true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:                     true,
	{Group: "authorization.k8s.io", Kind: "LocalSubjectAccessReview"}: true,
}

// orphans counts the objects in the Application's destination namespace
// that no Application tracks, when its project monitors them
// (spec.orphanedResources). Objects with an owner, the kinds above, the
// namespace's default ServiceAccount and kube-root-ca.crt ConfigMap, the
// default/kubernetes Service, kinds the project forbids and the project's
// ignore list are not counted. A negative count means monitoring is off.
func (r *reconciler) orphans(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, dest *engine.Destination) (int, error) {
	settings := proj.Spec.OrphanedResources
	ns := app.Spec.Destination.Namespace
	if settings == nil || ns == "" {
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
		if unmonitored[gvk.GroupKind()] {
			continue
		}
		if err := cache.Watch(ctx, gvk); err != nil {
			return 0, fmt.Errorf("watching %s for orphaned resources: %w", gvk.Kind, err)
		}
	}
	n := 0
	for _, obj := range cache.InNamespace(ns) {
		if len(obj.GetOwnerReferences()) > 0 || tracking.App(r.tracking, obj) != "" || isHook(obj) ||
			unmonitored[obj.GroupVersionKind().GroupKind()] || builtIn(obj) || project.Permits(proj, obj, true) != nil {
			continue
		}
		if ignoredOrphan(settings.Ignore, obj) {
			continue
		}
		n++
	}
	return n, nil
}

// builtIn reports objects Kubernetes creates in every namespace.
func builtIn(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "ServiceAccount" && obj.GetName() == "default":
		return true
	case gvk.Group == "" && gvk.Kind == "ConfigMap" && obj.GetName() == "kube-root-ca.crt":
		return true
	case gvk.Group == "" && gvk.Kind == "Service" && obj.GetName() == "kubernetes" && obj.GetNamespace() == "default":
		return true
	}
	return false
}

func ignoredOrphan(keys []v1alpha1.OrphanedResourceKey, obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	for _, k := range keys {
		if project.GlobMatch(project.OrStar(k.Group), gvk.Group) && project.GlobMatch(project.OrStar(k.Kind), gvk.Kind) && project.GlobMatch(project.OrStar(k.Name), obj.GetName()) {
			return true
		}
	}
	return false
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
