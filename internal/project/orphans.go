package project

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// unmonitoredKinds are never orphaned resources: objects the cluster
// itself churns, which Argo CD leaves out of its caches by default.
var unmonitoredKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "Event"}:                                        true,
	{Group: "events.k8s.io", Kind: "Event"}:                           true,
	{Group: "", Kind: "Endpoints"}:                                    true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:                true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:                     true,
	{Group: "authorization.k8s.io", Kind: "LocalSubjectAccessReview"}: true,
}

// MonitorsOrphans reports whether proj asks for orphaned resources
// (spec.orphanedResources) to be found.
func MonitorsOrphans(proj *v1alpha1.AppProject) bool {
	return proj != nil && proj.Spec.OrphanedResources != nil
}

// OrphanKind reports whether objects of kind gk can be orphaned
// resources: the kinds worth listing when looking for them.
func OrphanKind(gk schema.GroupKind) bool { return !unmonitoredKinds[gk] }

// IsOrphan reports whether obj, an object of an Application's destination
// namespace, is an orphaned resource of proj, as Argo CD decides: no
// Application tracks it (trackedBy is the Application its tracking
// names, "" for none), nothing owns it, it is no hook, not of a kind the
// cluster churns or creates in every namespace (the default
// ServiceAccount, kube-root-ca.crt), of a kind proj permits, and not in
// the project's ignore list.
func IsOrphan(proj *v1alpha1.AppProject, obj *unstructured.Unstructured, trackedBy string) bool {
	if !MonitorsOrphans(proj) || trackedBy != "" || len(obj.GetOwnerReferences()) > 0 || v1alpha1.IsHook(obj.GetAnnotations()) ||
		!OrphanKind(obj.GroupVersionKind().GroupKind()) || builtIn(obj) || KindPermitted(proj, obj, true) != nil {
		return false
	}
	gvk := obj.GroupVersionKind()
	for _, k := range proj.Spec.OrphanedResources.Ignore {
		if GlobMatch(OrStar(k.Group), gvk.Group) && GlobMatch(OrStar(k.Kind), gvk.Kind) && GlobMatch(OrStar(k.Name), obj.GetName()) {
			return false
		}
	}
	return true
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
