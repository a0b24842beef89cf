// Package appstate answers questions about one Application's resources on
// demand, for the API server: its rendered manifests, the comparison of
// each managed resource, the tree of live objects it owns, single live
// objects and their events. It reads the destination cluster directly and
// renders through the repo server, so it works beside a controller in
// another process; the controller's own caches are not consulted.
package appstate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
)

// FieldManager is the field manager the controller syncs with; dry runs
// use it so predictions match what a sync would do.
const FieldManager = "capstan"

// Reader reads Applications' resources. All fields are required.
type Reader struct {
	// Client reads argocd-cm (tracking method, custom health checks).
	Client client.Reader
	// Namespace is the control namespace.
	Namespace string
	// Clusters finds destination clusters.
	Clusters *cluster.Registry
	// Renderer renders the Applications' sources.
	Renderer repo.Renderer

	mu    sync.Mutex
	dests map[string]*dest
}

// dest is what the Reader keeps per destination cluster.
type dest struct {
	client dynamic.Interface
	mapper *kube.DiscoveryMapper
	differ *diff.Differ
}

func (r *Reader) dest(ctx context.Context, app *v1alpha1.Application) (*dest, error) {
	c, err := r.Clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := c.Server + "|" + c.Name
	if d, ok := r.dests[key]; ok {
		return d, nil
	}
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	d := &dest{client: dc, mapper: kube.NewDiscoveryMapper(disc)}
	d.differ = diff.New(dc, d.mapper, diff.Options{FieldManager: FieldManager, CacheSize: 1000})
	if r.dests == nil {
		r.dests = map[string]*dest{}
	}
	r.dests[key] = d
	return d, nil
}

// resource returns the client for a kind in a namespace.
func (d *dest) resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, bool, error) {
	m, err := d.mapper.Mapping(gvk)
	if err != nil {
		return nil, false, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return d.client.Resource(m.Resource).Namespace(namespace), true, nil
	}
	return d.client.Resource(m.Resource), false, nil
}

// get returns the live object, or nil when it does not exist.
func (d *dest) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, _, err := d.resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, name, metaGet)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return obj, nil
}

// settings reads argocd-cm (empty when absent).
func (r *Reader) settings(ctx context.Context) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: "argocd-cm"}, cm)
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap/%s/argocd-cm: %w", r.Namespace, err)
	}
	return cm.Data, nil
}

// Manifests renders the Application's sources, at revision when given
// (one source), as the repo server returns them.
func (r *Reader) Manifests(ctx context.Context, app *v1alpha1.Application, revision string) (*repo.Response, error) {
	req := &repo.Request{AppName: app.Name, Namespace: app.Spec.Destination.Namespace, Sources: app.Spec.GetSources()}
	if len(req.Sources) == 0 {
		return nil, fmt.Errorf("application %s has no source", app.Name)
	}
	if revision != "" {
		req.Revisions = []string{revision}
	}
	resp, err := r.Renderer.Render(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("rendering application %s: %w", app.Name, err)
	}
	return resp, nil
}

// ManagedResources compares each managed resource (rendered, or live and
// tracked as the status lists it) with its live state, as the controller
// does: the predicted state is a server-side dry run of the sync.
func (r *Reader) ManagedResources(ctx context.Context, app *v1alpha1.Application) ([]ResourceDiff, error) {
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, err
	}
	cm, err := r.settings(ctx)
	if err != nil {
		return nil, err
	}
	method, err := tracking.ParseMethod(cm["application.resourceTrackingMethod"])
	if err != nil {
		return nil, err
	}
	resp, err := r.Manifests(ctx, app, "")
	if err != nil {
		return nil, err
	}
	key := tracking.AppKey(app.Namespace, app.Name, r.Namespace)
	seen := map[string]bool{}
	var out []ResourceDiff
	for _, obj := range resp.Objects {
		gvk := obj.GroupVersionKind()
		_, namespaced, err := d.resource(gvk, "")
		if err != nil {
			return nil, err
		}
		switch {
		case !namespaced:
			obj.SetNamespace("")
		case obj.GetNamespace() == "":
			obj.SetNamespace(app.Spec.Destination.Namespace)
		}
		tracking.Set(method, key, obj)
		seen[refKey(gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName())] = true
		rd := ResourceDiff{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Hook: v1alpha1.IsHook(obj.GetAnnotations())}
		live, err := d.get(ctx, gvk, obj.GetNamespace(), obj.GetName())
		if err != nil {
			return nil, err
		}
		target, _ := diff.MaskSecret(obj, nil)
		rd.TargetState = toJSON(target)
		if rd.Hook {
			out = append(out, rd)
			continue
		}
		res, err := d.differ.Diff(ctx, obj, live, app.Spec.IgnoreDifferences)
		if err != nil {
			return nil, err
		}
		rd.Modified, rd.PredictedLiveState = res.Modified, toJSON(res.Predicted)
		if live != nil {
			masked, _ := diff.MaskSecret(live, nil)
			rd.LiveState, rd.NormalizedLiveState, rd.ResourceVersion = toJSON(masked), toJSON(res.Live), live.GetResourceVersion()
		}
		out = append(out, rd)
	}
	// Live objects the status lists that are no longer rendered: a sync
	// would prune them.
	for _, st := range app.Status.Resources {
		if st.Hook || seen[refKey(st.Group, st.Kind, st.Namespace, st.Name)] {
			continue
		}
		live, err := d.get(ctx, schema.GroupVersionKind{Group: st.Group, Version: st.Version, Kind: st.Kind}, st.Namespace, st.Name)
		if err != nil || live == nil || tracking.App(method, live) != key {
			continue
		}
		masked, _ := diff.MaskSecret(live, nil)
		out = append(out, ResourceDiff{Group: st.Group, Kind: st.Kind, Namespace: st.Namespace, Name: st.Name,
			LiveState: toJSON(masked), NormalizedLiveState: toJSON(masked), ResourceVersion: live.GetResourceVersion(), Modified: true})
	}
	sort.Slice(out, func(i, j int) bool {
		return refKey(out[i].Group, out[i].Kind, out[i].Namespace, out[i].Name) < refKey(out[j].Group, out[j].Kind, out[j].Namespace, out[j].Name)
	})
	return out, nil
}

// Live returns a live object of the Application's tree: a managed object
// or one it owns. Others are not found, so the API cannot be used to read
// arbitrary objects of a cluster.
func (r *Reader) Live(ctx context.Context, app *v1alpha1.Application, ref ResourceRef) (*unstructured.Unstructured, error) {
	tree, err := r.Tree(ctx, app)
	if err != nil {
		return nil, err
	}
	node := tree.Find(ref.Group, ref.Kind, ref.Namespace, ref.Name)
	if node == nil {
		return nil, NotFoundError{Ref: ref, App: app.Name}
	}
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, err
	}
	obj, err := d.get(ctx, schema.GroupVersionKind{Group: node.Group, Version: node.Version, Kind: node.Kind}, node.Namespace, node.Name)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, NotFoundError{Ref: ref, App: app.Name}
	}
	masked, _ := diff.MaskSecret(obj, nil)
	return masked, nil
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
	ri, _, err := d.resource(corev1.SchemeGroupVersion.WithKind("Event"), obj.GetNamespace())
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

func refKey(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

func toJSON(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return ""
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
