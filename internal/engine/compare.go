package engine

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/apply"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
)

// CompareRequest is one Application's desired state and how to compare it.
type CompareRequest struct {
	// App is the Application's tracking key (tracking.AppKey). Required.
	App string
	// Tracking marks desired objects as the Application's. Default
	// tracking.Annotation.
	Tracking tracking.Method
	// Namespace is the destination namespace, given to namespaced objects
	// rendered without one.
	Namespace string
	// Desired are the rendered objects, hooks included. Compare sets
	// their namespace by scope and their tracking id, in place.
	Desired []*unstructured.Unstructured
	// Known are the resources the last comparison listed
	// (status.resources), so that objects no longer rendered are found.
	Known []v1alpha1.ResourceStatus
	// IgnoreDifferences are the Application's ignoreDifferences rules.
	IgnoreDifferences []v1alpha1.ResourceIgnoreDifferences
	// SyncOptions are the Application's sync options: the comparison
	// predicts each object as its sync would apply it (ServerSideApply=false
	// client-side).
	SyncOptions []string
	// Permit, if set, says why an object may not be synced (its project
	// forbids it), or nil. The destination's own limits always apply.
	Permit func(obj *unstructured.Unstructured, namespaced bool) error
	// Health computes each live object's health. Default: built-in rules.
	Health *health.Checker
	// Live reads the live state: dest.Watched() or dest.Direct(method).
	// Required.
	Live LiveReader
	// Exclude, if set, says which kinds are left out (argocd-cm's
	// resource.exclusions and inclusions): never read, compared or
	// pruned; rendered objects of them go to Excluded.
	Exclude func(group, kind string) bool
}

// Comparison is the outcome of comparing one Application.
type Comparison struct {
	// Resources are the desired objects (hooks aside) and the live ones to
	// prune, ordered by key.
	Resources []Resource
	// Desired are the desired objects but hooks; Hooks the hooks.
	Desired []*unstructured.Unstructured
	Hooks   []*unstructured.Unstructured
	// Prune are the live objects the Application tracks that are no
	// longer desired, ordered by key.
	Prune []*unstructured.Unstructured
	// Live are the live objects the Application tracks, by key.
	Live map[ObjectKey]*unstructured.Unstructured
	// Excluded are the rendered objects of kinds the request's Exclude
	// leaves out: not compared, not synced.
	Excluded []*unstructured.Unstructured
	// Sync and Health sum up the Resources.
	Sync   v1alpha1.SyncStatusCode
	Health v1alpha1.HealthStatusCode
	// Denied are the objects (desired or to prune) that may not be
	// synced, with the reason; a sync touching one fails.
	Denied map[ObjectKey]string
	// Shared describe desired objects another Application tracks.
	Shared []string
}

// Resource is the comparison of one object.
type Resource struct {
	Key     ObjectKey
	Version string
	// Target is the desired object; nil for one to prune.
	Target *unstructured.Unstructured
	// Live is the live object; nil when it does not exist.
	Live *unstructured.Unstructured
	// Diff is the dry-run comparison; nil when the object is denied or
	// to be pruned.
	Diff *diff.Result
	// Status is Synced, OutOfSync, or Unknown for a denied object.
	Status v1alpha1.SyncStatusCode
	// Health is the live object's health; nil for one to prune or denied.
	Health *v1alpha1.HealthStatus
	// RequiresPruning marks a live object no longer desired.
	RequiresPruning bool
	// Denied is why the object may not be synced; empty when it may.
	Denied string
}

// Modified reports whether a sync would change the object: create,
// update or prune it.
func (r Resource) Modified() bool { return r.Status != v1alpha1.SyncStatusCodeSynced }

// ResourceStatus is the entry an Application's status.resources has for
// the resource.
func (r Resource) ResourceStatus() v1alpha1.ResourceStatus {
	return v1alpha1.ResourceStatus{Group: r.Key.Group, Version: r.Version, Kind: r.Key.Kind, Namespace: r.Key.Namespace, Name: r.Key.Name,
		Status: r.Status, Health: r.Health, RequiresPruning: r.RequiresPruning}
}

// Compare compares the desired objects with the live state: each desired
// object by a server-side dry run of the sync, with its health; each live
// object the Application tracks that is no longer desired is to prune.
// An error means the comparison could not be made, and nothing may be
// synced or pruned on its account.
func (d *Destination) Compare(ctx context.Context, req CompareRequest) (*Comparison, error) {
	if req.Tracking.IsZero() {
		req.Tracking = tracking.Annotation
	}
	if req.Health == nil {
		req.Health, _ = health.NewChecker(nil)
	}
	cmp := &Comparison{Denied: map[ObjectKey]string{}, Sync: v1alpha1.SyncStatusCodeSynced, Health: v1alpha1.HealthStatusHealthy}
	var kinds []schema.GroupVersionKind
	unserved := map[ObjectKey]bool{}
	excluded := func(gk schema.GroupKind) bool { return req.Exclude != nil && req.Exclude(gk.Group, gk.Kind) }
	for _, obj := range req.Desired {
		if excluded(obj.GroupVersionKind().GroupKind()) {
			cmp.Excluded = append(cmp.Excluded, obj)
			continue
		}
		namespaced, err := d.normalize(obj, req.Namespace)
		if meta.IsNoMatchError(err) && apply.AwaitsDefinition(obj, req.Desired) {
			// Its kind comes with this sync (or from someone else, as its
			// SkipDryRunOnMissingResource says): Missing until then, and a
			// sync waits for it.
			namespaced, err = true, nil
			if obj.GetNamespace() == "" {
				obj.SetNamespace(req.Namespace)
			}
			unserved[KeyOf(obj)] = true
		}
		if err != nil {
			return nil, err
		}
		tracking.Set(req.Tracking, req.App, obj)
		if why := d.denied(req, obj, namespaced); why != "" {
			cmp.Denied[KeyOf(obj)] = why
		}
		if v1alpha1.IsHook(obj.GetAnnotations()) {
			cmp.Hooks = append(cmp.Hooks, obj)
			continue
		}
		cmp.Desired = append(cmp.Desired, obj)
		if !unserved[KeyOf(obj)] {
			kinds = append(kinds, obj.GroupVersionKind())
		}
	}
	known := make([]v1alpha1.ResourceStatus, 0, len(req.Known))
	for _, rs := range req.Known {
		if !excluded(schema.GroupKind{Group: rs.Group, Kind: rs.Kind}) {
			known = append(known, rs)
		}
	}
	live, err := req.Live.Tracked(ctx, req.App, kinds, known)
	if err != nil {
		return nil, err
	}
	// A kind excluded since it was watched stays in the cache: it is
	// still never compared nor pruned. A live object the project does not
	// permit is left out as Argo CD leaves it out: never shown, compared
	// (no dry run of it is made) nor pruned; a desired one is denied.
	for k, obj := range live {
		if excluded(schema.GroupKind{Group: k.Group, Kind: k.Kind}) || !d.permitted(req, obj) {
			delete(live, k)
		}
	}
	cmp.Live = live
	desired := map[ObjectKey]bool{}
	for _, obj := range cmp.Desired {
		if unserved[KeyOf(obj)] {
			desired[KeyOf(obj)] = true
			cmp.add(Resource{Key: KeyOf(obj), Version: obj.GroupVersionKind().Version, Target: obj, Status: v1alpha1.SyncStatusCodeOutOfSync,
				Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusMissing}})
			continue
		}
		res, err := d.compareOne(ctx, req, cmp, obj)
		if err != nil {
			return nil, err
		}
		desired[res.Key] = true
		cmp.add(res)
	}
	for k, obj := range cmp.Live {
		if desired[k] || v1alpha1.IsHook(obj.GetAnnotations()) {
			continue
		}
		if m, err := d.Mapper.Mapping(obj.GroupVersionKind()); err == nil {
			if why := d.denied(req, obj, m.Scope.Name() == meta.RESTScopeNameNamespace); why != "" {
				cmp.Denied[k] = why
			}
		}
		res := Resource{Key: k, Version: obj.GroupVersionKind().Version, Live: obj, Status: v1alpha1.SyncStatusCodeOutOfSync, RequiresPruning: true}
		if CompareOptionsOf(obj).IgnoreExtraneous {
			cmp.Resources = append(cmp.Resources, res) // listed, not counted
		} else {
			cmp.add(res)
		}
		cmp.Prune = append(cmp.Prune, obj)
	}
	sort.Slice(cmp.Resources, func(i, j int) bool { return cmp.Resources[i].Key.Less(cmp.Resources[j].Key) })
	sort.Slice(cmp.Prune, func(i, j int) bool { return KeyOf(cmp.Prune[i]).Less(KeyOf(cmp.Prune[j])) })
	return cmp, nil
}

// compareOne compares one desired object with its live state.
func (d *Destination) compareOne(ctx context.Context, req CompareRequest, cmp *Comparison, obj *unstructured.Unstructured) (Resource, error) {
	key := KeyOf(obj)
	res := Resource{Key: key, Version: obj.GroupVersionKind().Version, Target: obj, Live: cmp.Live[key]}
	if why, denied := cmp.Denied[key]; denied {
		// Not read: the project does not let the Application reach it.
		res.Status, res.Denied = v1alpha1.SyncStatusCodeUnknown, why
		return res, nil
	}
	if res.Live == nil {
		got, err := req.Live.Get(ctx, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
		if err != nil {
			return res, err
		}
		if got != nil {
			res.Live = got // exists but not yet tracked: compared, a sync adopts it
			if other := tracking.App(req.Tracking, got); other != "" && other != req.App {
				cmp.Shared = append(cmp.Shared, fmt.Sprintf("%s/%s is part of applications %s and %s", obj.GetKind(), obj.GetName(), req.App, other))
			}
		}
	}
	how := diff.ServerSide
	if appOpts, err := apply.ParseOptionList(req.SyncOptions); err == nil && apply.AppliedClientSide(appOpts, obj) {
		how = diff.ClientSide
	}
	result, err := d.Differ.Diff(ctx, obj, res.Live, req.IgnoreDifferences, how)
	if err != nil {
		return res, err
	}
	res.Diff, res.Status = result, v1alpha1.SyncStatusCodeSynced
	if result.Modified {
		res.Status = v1alpha1.SyncStatusCodeOutOfSync
	}
	h, _ := req.Health.Check(res.Live)
	res.Health = &v1alpha1.HealthStatus{Status: h.Status, Message: h.Message}
	return res, nil
}

// add records a resource and its part in the sums.
func (c *Comparison) add(r Resource) {
	if r.Status != v1alpha1.SyncStatusCodeSynced {
		c.Sync = v1alpha1.SyncStatusCodeOutOfSync
	}
	if r.Health != nil {
		c.Health = health.Worst(c.Health, r.Health.Status)
	}
	c.Resources = append(c.Resources, r)
}

// normalize gives a namespaced object the destination namespace when it
// has none and takes it from a cluster-scoped one; it reports the scope.
func (d *Destination) normalize(obj *unstructured.Unstructured, namespace string) (bool, error) {
	m, err := d.Mapper.Mapping(obj.GroupVersionKind())
	if err != nil {
		return false, err
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case !namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		obj.SetNamespace(namespace)
	}
	return namespaced, nil
}

// permitted reports whether the project lets the app reach a live object.
func (d *Destination) permitted(req CompareRequest, obj *unstructured.Unstructured) bool {
	if req.Permit == nil {
		return true
	}
	m, err := d.Mapper.Mapping(obj.GroupVersionKind())
	if err != nil {
		return true // a kind no longer served: nothing to reach
	}
	return req.Permit(obj, m.Scope.Name() == meta.RESTScopeNameNamespace) == nil
}

// denied says why an object may not be synced, or "".
func (d *Destination) denied(req CompareRequest, obj *unstructured.Unstructured, namespaced bool) string {
	if req.Permit != nil {
		if err := req.Permit(obj, namespaced); err != nil {
			return err.Error()
		}
	}
	if err := d.Manages(obj, namespaced); err != nil {
		return err.Error()
	}
	return ""
}
