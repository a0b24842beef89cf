package engine

import (
	"context"
	"errors"
	"maps"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
)

// LiveReader finds the live objects a comparison needs. A destination
// offers two: Watched, from its watch cache (the controller's), and
// Direct, reading the API server (the API server's, which keeps no
// watches).
type LiveReader interface {
	// Tracked returns the live objects the Application app tracks. kinds
	// are the kinds it renders and known the resources its last
	// comparison listed (status.resources): objects of those kinds, or
	// those objects, are what a reader needs to look at.
	Tracked(ctx context.Context, app string, kinds []schema.GroupVersionKind, known []v1alpha1.ResourceStatus) (map[ObjectKey]*unstructured.Unstructured, error)
	// Get returns a live object, nil when it does not exist.
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
}

// Watched returns a LiveReader of the destination's watch cache: it starts
// watching each kind asked for and waits for its first listing. A kind the
// controller may not list (live.RestrictedError, with resource.respectRBAC)
// is read object by object instead, as Argo CD reads a kind its cache
// leaves out.
func (d *Destination) Watched() LiveReader { return watched{d} }

// Direct returns a LiveReader that reads each object from the API server;
// method tells which objects an Application tracks.
func (d *Destination) Direct(method tracking.Method) LiveReader { return direct{d, method} }

type watched struct{ d *Destination }

func (w watched) Tracked(ctx context.Context, app string, kinds []schema.GroupVersionKind, known []v1alpha1.ResourceStatus) (map[ObjectKey]*unstructured.Unstructured, error) {
	cache, err := w.d.Live()
	if err != nil {
		return nil, err
	}
	all := map[schema.GroupVersionKind]bool{}
	for _, gvk := range kinds {
		all[gvk] = true
	}
	for _, rs := range known {
		all[schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}] = true
	}
	c := w.d.Cluster
	restricted := map[schema.GroupVersionKind]bool{}
	for gvk := range all {
		m, mapErr := cache.Mapping(gvk)
		if mapErr != nil {
			continue // a kind that no longer exists has nothing live
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace && len(c.Namespaces) > 0 && !c.ClusterResources {
			continue // not managed there: never watched, refused by a sync
		}
		if err := cache.Watch(ctx, gvk); err != nil {
			var r *live.RestrictedError
			if !errors.As(err, &r) {
				return nil, err
			}
			restricted[gvk] = true
		}
	}
	out := map[ObjectKey]*unstructured.Unstructured{}
	for _, obj := range cache.ManagedBy(app) {
		out[KeyOf(obj)] = obj
	}
	if len(restricted) > 0 {
		var unwatched []v1alpha1.ResourceStatus
		for _, rs := range known {
			if restricted[schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}] {
				unwatched = append(unwatched, rs)
			}
		}
		read, err := readTracked(ctx, w.d, app, w.d.opts.Tracking, unwatched)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, read)
	}
	return out, nil
}

func (w watched) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	cache, err := w.d.Live()
	if err != nil {
		return nil, err
	}
	if cache.Restricted(gvk) {
		return w.d.Read(ctx, gvk, namespace, name)
	}
	obj, found, err := cache.Get(gvk, namespace, name)
	if err != nil || !found {
		return nil, nil // not watched (not managed there) or absent
	}
	return obj, nil
}

type direct struct {
	d      *Destination
	method tracking.Method
}

// Tracked reads the objects the last comparison listed and keeps those
// still tracked: the API server has no index of every object by tracking
// id, and objects rendered now are read by Get.
func (r direct) Tracked(ctx context.Context, app string, _ []schema.GroupVersionKind, known []v1alpha1.ResourceStatus) (map[ObjectKey]*unstructured.Unstructured, error) {
	return readTracked(ctx, r.d, app, r.method, known)
}

// readTracked reads the listed objects (hooks aside) one by one and keeps
// those app still tracks; one that cannot be read is left out.
func readTracked(ctx context.Context, d *Destination, app string, method tracking.Method, resources []v1alpha1.ResourceStatus) (map[ObjectKey]*unstructured.Unstructured, error) {
	out := map[ObjectKey]*unstructured.Unstructured{}
	for _, rs := range resources {
		if rs.Hook {
			continue
		}
		obj, err := d.Read(ctx, schema.GroupVersionKind{Group: rs.Group, Version: rs.Version, Kind: rs.Kind}, rs.Namespace, rs.Name)
		if err != nil || obj == nil || tracking.App(method, obj) != app {
			continue
		}
		out[KeyOf(obj)] = obj
	}
	return out, nil
}

func (r direct) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return r.d.Read(ctx, gvk, namespace, name)
}
