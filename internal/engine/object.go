package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// ObjectKey identifies one object of a destination whatever its version:
// the same object read as apps/v1 or extensions/v1beta1 has one key.
type ObjectKey struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// KeyOf returns an object's key.
func KeyOf(obj *unstructured.Unstructured) ObjectKey {
	gvk := obj.GroupVersionKind()
	return ObjectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// StatusKey returns the key of a resource an Application's status lists.
func StatusKey(s v1alpha1.ResourceStatus) ObjectKey {
	return ObjectKey{Group: s.Group, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name}
}

// String is group/kind/namespace/name, as Argo CD writes resource keys.
func (k ObjectKey) String() string {
	return k.Group + "/" + k.Kind + "/" + k.Namespace + "/" + k.Name
}

// Less orders keys by their String form.
func (k ObjectKey) Less(o ObjectKey) bool { return k.String() < o.String() }

// Ref names the object in messages as Kind/namespace/name (Kind/name
// when cluster-scoped).
func (k ObjectKey) Ref() string {
	if k.Namespace == "" {
		return k.Kind + "/" + k.Name
	}
	return k.Kind + "/" + k.Namespace + "/" + k.Name
}
