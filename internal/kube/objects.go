package kube

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Mapper maps a kind to its resource and scope. A cluster's live cache
// (internal/engine/live) is one, refreshing discovery for new kinds.
type Mapper interface {
	Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error)
}

// Ref names an object in errors as Kind/namespace/name (Kind/name when
// cluster-scoped).
func Ref(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + "/" + obj.GetName()
	}
	return obj.GetKind() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// IsImmutableChange reports whether the API server refused a change
// because a field may not change in place (a Job's template, an immutable
// ConfigMap's data, a Service's clusterIP): only deleting and recreating
// the object makes it.
func IsImmutableChange(err error) bool {
	return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "immutable")
}
