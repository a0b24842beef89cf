package appstate

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
)

// managedOnly is a LiveReader that reads only an Application's managed
// resources (its status.resources): what a diff against caller-supplied
// manifests may show. An object the caller names that the Application
// does not manage reads as absent, and only the managed resources' kinds
// are looked at, whatever kinds the caller's manifests have.
type managedOnly struct {
	engine.LiveReader
	managed []v1alpha1.ResourceStatus
	keys    map[engine.ObjectKey]bool
}

func newManagedOnly(inner engine.LiveReader, managed []v1alpha1.ResourceStatus) managedOnly {
	keys := make(map[engine.ObjectKey]bool, len(managed))
	for _, rs := range managed {
		keys[engine.StatusKey(rs)] = true
	}
	return managedOnly{LiveReader: inner, managed: managed, keys: keys}
}

func (m managedOnly) Tracked(ctx context.Context, app string, _ []schema.GroupVersionKind, _ []v1alpha1.ResourceStatus) (map[engine.ObjectKey]*unstructured.Unstructured, error) {
	live, err := m.LiveReader.Tracked(ctx, app, nil, m.managed)
	if err != nil {
		return nil, err
	}
	for k := range live {
		if !m.keys[k] {
			delete(live, k)
		}
	}
	return live, nil
}

func (m managedOnly) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	if !m.keys[engine.ObjectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}] {
		return nil, nil
	}
	return m.LiveReader.Get(ctx, gvk, namespace, name)
}

// permittedResources are the Application's managed resources its project
// and destination allow it to reach: only those are read live (Argo CD
// drops the others from an app's live objects too), so an app whose source
// names another tenant's object never shows it.
func (r *Reader) permittedResources(ctx context.Context, app *v1alpha1.Application, d *engine.Destination) []v1alpha1.ResourceStatus {
	permit := r.permit(ctx, app, d)
	out := make([]v1alpha1.ResourceStatus, 0, len(app.Status.Resources))
	for _, rs := range app.Status.Resources {
		gvk := schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}
		m, err := d.Mapper.Mapping(gvk)
		if err != nil {
			continue // a kind the cluster no longer serves has nothing live
		}
		namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		obj.SetNamespace(rs.Namespace)
		obj.SetName(rs.Name)
		if permit(obj, namespaced) != nil || d.Manages(obj, namespaced) != nil {
			continue
		}
		out = append(out, rs)
	}
	return out
}
