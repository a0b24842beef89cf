// Package diff decides whether a live object matches its desired state.
//
// Comparing a manifest with a live object field by field reports drift for
// every field the API server defaulted or a webhook set. Instead the desired
// object is applied server-side in dry-run mode, with the controller's field
// manager and forced ownership exactly as a sync would apply it; the result
// is what the object would look like after a sync, and it is compared with
// the live object. Results are cached by the desired object's content and
// the live object's resourceVersion, so an unchanged pair costs no request;
// each live object has at most one result per apply method, so a result
// made stale by a change is replaced rather than kept.
package diff

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/csa"
	"github.com/capstan-cd/capstan/internal/kube"
)

// Options configure a Differ.
type Options struct {
	// FieldManager is the sync's field manager. Default kube.FieldManager.
	FieldManager string
	// CacheSize bounds the cached dry-run results and field manager
	// reads, at most one of each kind per live object. Default 10,000.
	CacheSize int
	// JQTimeout bounds each jq path expression of an ignore rule (Argo
	// CD's ignore normalizer timeout): one that runs longer fails the
	// comparison. Default objpath.JQTimeout, 1 s.
	JQTimeout time.Duration
}

// Differ compares desired and live objects of one cluster.
type Differ struct {
	client dynamic.Interface
	mapper kube.Mapper
	opts   Options
	cache  *lru.Cache[cacheKey, cached]
}

// cacheKey names one cached result about a live object: its dry-run apply
// by one method, or its field managers.
type cacheKey struct {
	uid     types.UID
	how     Method
	managed bool
}

// cached is a result, valid while the live object is at version and (for
// a dry run) the desired object hashes to desired.
type cached struct {
	desired [sha256.Size]byte
	version string
	// object is the result; nil for a dry run that left the live object
	// as it was. In the steady state nearly every prediction is one, and
	// it costs no copy of the object.
	object *unstructured.Unstructured
}

// get returns the result key names if it is valid for version and desired.
func (d *Differ) get(key cacheKey, version string, desired [sha256.Size]byte) (cached, bool) {
	c, ok := d.cache.Get(key)
	return c, ok && key.uid != "" && c.version == version && c.desired == desired
}

// put caches a result about a live object with a UID.
func (d *Differ) put(key cacheKey, c cached) {
	if key.uid != "" {
		d.cache.Add(key, c)
	}
}

// New returns a Differ for the cluster client reaches.
func New(client dynamic.Interface, mapper kube.Mapper, opts Options) *Differ {
	if opts.FieldManager == "" {
		opts.FieldManager = kube.FieldManager
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = 10000
	}
	c, _ := lru.New[cacheKey, cached](opts.CacheSize)
	return &Differ{client: client, mapper: mapper, opts: opts, cache: c}
}

// Result is the outcome of one comparison.
type Result struct {
	// Modified is true when a sync would change the live object (or create it).
	Modified bool
	// Predicted is the object as it would be after a sync, normalized,
	// with Secret values masked.
	Predicted *unstructured.Unstructured
	// Live is the live object, normalized and masked likewise; nil when it
	// does not exist.
	Live *unstructured.Unstructured
}

// Method is how a sync would apply an object, which the prediction
// follows.
type Method int

const (
	// ServerSide is a server-side apply by the sync's field manager.
	ServerSide Method = iota
	// ClientSide is kubectl's client-side apply (ServerSideApply=false):
	// a three-way merge with the last-applied configuration.
	ClientSide
)

// Diff compares desired with live (nil when the object does not exist),
// leaving out the fields the ignore rules name; how says how a sync would
// apply desired.
func (d *Differ) Diff(ctx context.Context, desired, live *unstructured.Unstructured, ignore []v1alpha1.ResourceIgnoreDifferences, how Method) (*Result, error) {
	if live == nil {
		p, _ := MaskSecret(normalize(desired), nil)
		return &Result{Modified: true, Predicted: p}, nil
	}
	predicted, err := d.predict(ctx, desired, live, how)
	if kube.IsImmutableChange(err) {
		// No apply can make desired: it differs, and only a forced sync
		// (delete and recreate) changes the object.
		p, l := MaskSecret(normalize(desired), normalize(live))
		return &Result{Modified: true, Predicted: p, Live: l}, nil
	}
	if err != nil {
		return nil, err
	}
	p, l := normalize(predicted), normalize(live)
	rules := matching(ignore, desired)
	if err := removeIgnored(p, rules, d.opts.JQTimeout); err != nil {
		return nil, err
	}
	if err := removeIgnored(l, rules, d.opts.JQTimeout); err != nil {
		return nil, err
	}
	if names := managers(rules); len(names) > 0 {
		full, err := d.withManagedFields(ctx, live)
		if err != nil {
			return nil, err
		}
		owned, err := ownedFields(full, names)
		if err != nil {
			return nil, err
		}
		removeFields(p.Object, owned)
		removeFields(l.Object, owned)
	}
	modified := !reflect.DeepEqual(p.Object, l.Object)
	p, l = MaskSecret(p, l)
	return &Result{Modified: modified, Predicted: p, Live: l}, nil
}

// Record notes that applying desired (for real, not in a dry run) produced
// live: a comparison of the same pair needs no dry run.
func (d *Differ) Record(desired, live *unstructured.Unstructured) {
	data, err := json.Marshal(desired)
	if err != nil {
		return
	}
	d.put(cacheKey{uid: live.GetUID(), how: ServerSide}, cached{desired: sha256.Sum256(data), version: live.GetResourceVersion()})
}

// stripped drops managedFields, which comparisons never read, before an
// object is cached.
func stripped(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GetManagedFields() == nil {
		return obj
	}
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	return obj
}

// predict returns the dry-run apply of desired over live, server-side or
// client-side as how says.
func (d *Differ) predict(ctx context.Context, desired, live *unstructured.Unstructured, how Method) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(desired)
	if err != nil {
		return nil, err
	}
	key, sum := cacheKey{uid: live.GetUID(), how: how}, sha256.Sum256(data)
	if c, ok := d.get(key, live.GetResourceVersion(), sum); ok {
		if c.object == nil {
			return live, nil
		}
		return c.object, nil
	}
	ri, err := d.resourceFor(desired)
	if err != nil {
		return nil, err
	}
	var out *unstructured.Unstructured
	if how == ClientSide {
		out, err = d.clientSide(ctx, ri, desired, live)
	} else {
		force := true
		out, err = ri.Patch(ctx, desired.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: d.opts.FieldManager,
			Force:        &force,
			DryRun:       []string{metav1.DryRunAll},
		})
	}
	if err != nil {
		return nil, fmt.Errorf("dry-run apply of %s: %w", kube.Ref(desired), err)
	}
	out = stripped(out)
	result := cached{desired: sum, version: live.GetResourceVersion()}
	if !reflect.DeepEqual(normalize(out).Object, normalize(live).Object) {
		result.object = out
	}
	d.put(key, result)
	return out, nil
}

// clientSide is the dry run of kubectl's client-side apply of desired
// over live.
func (d *Differ) clientSide(ctx context.Context, ri dynamic.ResourceInterface, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	modified, err := csa.WithLastApplied(desired)
	if err != nil {
		return nil, err
	}
	patch, kind, err := csa.Patch(modified, live)
	if err != nil {
		return nil, err
	}
	return ri.Patch(ctx, desired.GetName(), kind, patch, metav1.PatchOptions{FieldManager: d.opts.FieldManager, DryRun: []string{metav1.DryRunAll}})
}

// resourceFor returns the client for obj's kind and namespace.
func (d *Differ) resourceFor(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	m, err := d.mapper.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return d.client.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return d.client.Resource(m.Resource), nil
}

// normalize drops what differs between any two reads of the same object
// and is never part of the desired state: server-maintained metadata and
// status.
func normalize(obj *unstructured.Unstructured) *unstructured.Unstructured {
	u := obj.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if a := u.GetAnnotations(); a != nil {
		delete(a, csa.LastAppliedAnnotation)
		delete(a, "deployment.kubernetes.io/revision")
		if len(a) == 0 {
			a = nil
		}
		u.SetAnnotations(a)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}
