// Package appstate answers questions about one Application's resources on
// demand, for the API server: its rendered manifests, the comparison of
// each managed resource (a projection of the engine's comparison, the one
// the controller records), the tree of live objects it owns, single live
// objects and their events. It reads the destination cluster directly and
// renders through the repo server, so it works beside a controller in
// another process; the controller's watch caches are not consulted.
package appstate

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Reader reads Applications' resources. Fields without a default are
// required.
type Reader struct {
	// Client reads argocd-cm (tracking method, custom health checks) and
	// AppProjects, usually from an informer cache.
	Client client.Reader
	// Namespace is the control namespace.
	Namespace string
	// Clusters finds destination clusters.
	Clusters *cluster.Registry
	// Renderer renders the Applications' sources.
	Renderer repo.Renderer
	// Destinations holds the clients of each destination cluster.
	// Default: a set of the Reader's own.
	Destinations *engine.Destinations

	once sync.Once
}

// dest returns the clients of the Application's destination cluster,
// made afresh when its credentials changed.
func (r *Reader) dest(ctx context.Context, app *v1alpha1.Application) (*engine.Destination, error) {
	r.once.Do(func() {
		if r.Destinations == nil {
			r.Destinations = engine.NewDestinations(engine.DestinationOptions{})
		}
	})
	c, err := r.Clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return nil, err
	}
	return r.Destinations.Get(c)
}

// Manifests renders the Application's sources, each at the revision
// revisions gives it (by the source's index; an empty or missing entry
// keeps its targetRevision), as the repo server returns them.
func (r *Reader) Manifests(ctx context.Context, app *v1alpha1.Application, revisions []string) (*repo.Response, error) {
	cm, err := settings.LoadArgoCD(ctx, r.Client, r.Namespace)
	if err != nil {
		return nil, err
	}
	req := repo.RequestFor(app)
	req.Revisions, req.KustomizeBuildOptions, req.HelmValuesFileSchemes = revisions, cm.KustomizeBuildOptions(), cm.HelmValuesFileSchemes()
	req.DisabledTools = cm.DisabledTools()
	req.KustomizeVersions = cm.KustomizeVersions()
	if len(req.Sources) == 0 {
		return nil, fmt.Errorf("application %s has no source", app.Name)
	}
	if len(revisions) > len(req.Sources) {
		return nil, fmt.Errorf("application %s has %d sources, not %d", app.Name, len(req.Sources), len(revisions))
	}
	resp, err := r.Renderer.Render(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("rendering application %s: %w", app.Name, err)
	}
	return resp, nil
}

// ManagedResources compares each managed resource (rendered, or live and
// tracked as the status lists it) with its live state through the engine's
// one comparison, the one the controller records: the predicted state is
// a server-side dry run of the sync.
func (r *Reader) ManagedResources(ctx context.Context, app *v1alpha1.Application) ([]ResourceDiff, error) {
	resp, err := r.Manifests(ctx, app, nil)
	if err != nil {
		return nil, err
	}
	return r.compare(ctx, app, resp.Objects, false)
}

// DiffWith is ManagedResources with desired (rendered from another
// revision, or locally, by the caller) in place of what the app's sources
// render now: Argo CD's server-side diff. Only the app's managed resources
// are read live; an object of desired the app does not manage compares
// as absent, so the caller cannot read other objects through it.
func (r *Reader) DiffWith(ctx context.Context, app *v1alpha1.Application, desired []*unstructured.Unstructured) ([]ResourceDiff, error) {
	return r.compare(ctx, app, desired, true)
}

// comparison is the engine's comparison of desired with the app's live
// state, with the argocd-cm it was made under; managedOnly limits the live
// reads to the app's managed resources.
func (r *Reader) comparison(ctx context.Context, app *v1alpha1.Application, desired []*unstructured.Unstructured, managedOnly bool) (*engine.Comparison, *settings.ArgoCD, error) {
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	cm, err := settings.LoadArgoCD(ctx, r.Client, r.Namespace)
	if err != nil {
		return nil, nil, err
	}
	method, err := tracking.FromSettings(cm.TrackingMethod(), cm.InstanceLabelKey(), cm.InstallationID())
	if err != nil {
		return nil, nil, err
	}
	checker, _ := health.NewChecker(cm.Data)  // a broken check makes its kinds Unknown, naming it
	ignore, _ := cm.IgnoreDifferencesFor(app) // as the controller: a broken customization is left out
	filter, err := cm.ResourceFilter()
	if err != nil {
		return nil, nil, err
	}
	var live engine.LiveReader = d.Direct(method)
	if managedOnly {
		live = newManagedOnly(live, r.permittedResources(ctx, app, d))
	}
	comparison, err := d.Compare(ctx, engine.CompareRequest{
		Exclude: filter.On(d.Cluster.Server),
		App:     tracking.AppKey(app.Namespace, app.Name, r.Namespace), Tracking: method, Namespace: app.Spec.Destination.Namespace,
		Desired: desired, Known: app.Status.Resources, IgnoreDifferences: ignore, SyncOptions: app.Spec.GetSyncOptions(),
		Permit: r.permit(ctx, app, d), Health: checker, Live: live,
	})
	if err != nil {
		return nil, nil, err
	}
	return comparison, cm, nil
}

// compare runs the engine's comparison of desired with the app's live
// state; managedOnly limits the live reads to the app's managed resources.
func (r *Reader) compare(ctx context.Context, app *v1alpha1.Application, desired []*unstructured.Unstructured, managedOnly bool) ([]ResourceDiff, error) {
	comparison, cm, err := r.comparison(ctx, app, desired, managedOnly)
	if err != nil {
		return nil, err
	}
	masker := diff.Masker{Annotations: cm.SensitiveAnnotations()}
	out := make([]ResourceDiff, 0, len(comparison.Resources)+len(comparison.Hooks))
	for _, res := range comparison.Resources {
		out = append(out, resourceDiff(masker, res))
	}
	for _, hook := range comparison.Hooks {
		target, _ := masker.Mask(hook, nil)
		k := engine.KeyOf(hook)
		out = append(out, ResourceDiff{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Hook: true,
			TargetState: toJSON(target), LiveState: toJSON(nil), NormalizedLiveState: toJSON(nil), PredictedLiveState: toJSON(nil)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].key().Less(out[j].key())
	})
	return out, nil
}

// resourceDiff projects one resource of a comparison in Argo CD's shape:
// every state is a JSON document, "null" when there is none.
func resourceDiff(masker diff.Masker, res engine.Resource) ResourceDiff {
	k := res.Key
	target, _ := masker.Mask(res.Target, nil)
	live, _ := masker.Mask(res.Live, nil)
	rd := ResourceDiff{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Modified: res.Modified(),
		TargetState: toJSON(target), LiveState: toJSON(live), NormalizedLiveState: toJSON(live), PredictedLiveState: toJSON(nil)}
	if res.Live != nil {
		rd.ResourceVersion = res.Live.GetResourceVersion()
	}
	if res.Diff != nil {
		predicted, normalized := masker.Mask(res.Diff.Predicted, res.Diff.Live)
		rd.PredictedLiveState, rd.NormalizedLiveState = toJSON(predicted), toJSON(normalized)
	}
	return rd
}

// permit returns the Application's project's verdict on an object in its
// destination cluster d, as the controller applies it. When the project
// cannot be read, nothing is permitted (and so nothing read live).
func (r *Reader) permit(ctx context.Context, app *v1alpha1.Application, d *engine.Destination) func(*unstructured.Unstructured, bool) error {
	proj, err := project.Load(ctx, r.Client, r.Namespace, cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName))
	if err != nil {
		return func(*unstructured.Unstructured, bool) error { return err }
	}
	cluster := project.Destination{Server: d.Cluster.Server, Name: d.Cluster.Name}
	return func(obj *unstructured.Unstructured, namespaced bool) error {
		return project.Permits(proj, obj, namespaced, cluster)
	}
}

// Live returns a live object of the Application's tree: a managed object
// or one it owns. Others are not found, so the API cannot be used to read
// arbitrary objects of a cluster.
func (r *Reader) Live(ctx context.Context, app *v1alpha1.Application, ref ResourceRef) (*unstructured.Unstructured, error) {
	obj, _, err := r.live(ctx, app, ref)
	if err != nil {
		return nil, err
	}
	masked, _ := r.Masker(ctx).Mask(obj, nil)
	return masked, nil
}

// Masker is what hides Secrets' values (and the sensitive annotations
// argocd-cm names) in everything the API shows. When argocd-cm cannot be
// read, values are still masked.
func (r *Reader) Masker(ctx context.Context) diff.Masker {
	cm, err := settings.LoadArgoCD(ctx, r.Client, r.Namespace)
	if err != nil {
		return diff.Masker{}
	}
	return diff.Masker{Annotations: cm.SensitiveAnnotations()}
}

// live reads an object of the Application's tree, unmasked, with its
// destination.
func (r *Reader) live(ctx context.Context, app *v1alpha1.Application, ref ResourceRef) (*unstructured.Unstructured, *engine.Destination, error) {
	tree, err := r.Tree(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	node := tree.Find(ref.Group, ref.Kind, ref.Namespace, ref.Name)
	if node == nil {
		return nil, nil, NotFoundError{Ref: ref, App: app.Name}
	}
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	obj, err := d.Read(ctx, schema.GroupVersionKind{Group: node.Group, Version: node.Version, Kind: node.Kind}, node.Namespace, node.Name)
	if err != nil {
		return nil, nil, err
	}
	if obj == nil {
		return nil, nil, NotFoundError{Ref: ref, App: app.Name}
	}
	return obj, d, nil
}

// Events lists the Kubernetes events of a live object of the
// Application's tree, from its cluster.
func (r *Reader) Events(ctx context.Context, app *v1alpha1.Application, ref ResourceRef) (*corev1.EventList, error) {
	obj, err := r.Live(ctx, app, ref)
	if err != nil {
		return nil, err
	}
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, err
	}
	ri, _, err := d.Resource(corev1.SchemeGroupVersion.WithKind("Event"), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, listBy("involvedObject.uid="+string(obj.GetUID())))
	if err != nil {
		return nil, fmt.Errorf("listing events of %s: %w", kube.Ref(obj), err)
	}
	out := &corev1.EventList{}
	data, err := list.MarshalJSON()
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	return out, err
}

// NotFoundError says an object is not part of an Application's tree.
type NotFoundError struct {
	Ref ResourceRef
	App string
}

func (e NotFoundError) Error() string {
	return fmt.Sprintf("%s %s/%s not found as part of application %s", e.Ref.Kind, e.Ref.Namespace, e.Ref.Name, e.App)
}

func (d ResourceDiff) key() engine.ObjectKey {
	return engine.ObjectKey{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}
}

func (r ResourceRef) key() engine.ObjectKey {
	return engine.ObjectKey{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// noState is the JSON of an absent state, as Argo CD's API writes it.
const noState = "null"

func toJSON(obj *unstructured.Unstructured) string {
	if obj == nil {
		return noState
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return noState
	}
	return string(data)
}

// healthOf returns the health of a live object, nil when its kind has none.
func healthOf(checker *health.Checker, obj *unstructured.Unstructured) *v1alpha1.HealthStatus {
	h, err := checker.Check(obj)
	if err != nil || h.Status == "" {
		return nil
	}
	return &v1alpha1.HealthStatus{Status: h.Status, Message: h.Message}
}
