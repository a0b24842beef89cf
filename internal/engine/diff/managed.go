package diff

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/objpath"
)

// managers returns the field managers the rules ignore.
func managers(rules []v1alpha1.ResourceIgnoreDifferences) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.ManagedFieldsManagers...)
	}
	return out
}

// withManagedFields returns live with its managedFields, reading it from
// the API server when the caller's copy has none (watch caches drop them).
// Reads are cached by the object's resourceVersion.
func (d *Differ) withManagedFields(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live.GetManagedFields() != nil {
		return live, nil
	}
	key := cacheKey{uid: live.GetUID(), managed: true}
	if c, ok := d.get(key, live.GetResourceVersion(), [sha256.Size]byte{}); ok {
		return c.object, nil
	}
	ri, err := d.resourceFor(live)
	if err != nil {
		return nil, err
	}
	full, err := ri.Get(ctx, live.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the field managers of %s: %w", kube.Ref(live), err)
	}
	d.put(key, cached{version: live.GetResourceVersion(), object: full})
	return full, nil
}

// ownedFields returns the leaf fields the named managers own in obj.
func ownedFields(obj *unstructured.Unstructured, names []string) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	for _, mf := range obj.GetManagedFields() {
		if !slices.Contains(names, mf.Manager) || mf.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("managed fields of %s by %s: %w", kube.Ref(obj), mf.Manager, err)
		}
		set = set.Union(s)
	}
	return set.Leaves(), nil
}

// removeFields deletes every field of set present in obj.
func removeFields(obj map[string]any, set *fieldpath.Set) {
	set.Iterate(func(p fieldpath.Path) {
		if steps, ok := resolve(obj, p); ok {
			objpath.Remove(obj, steps)
		}
	})
}

// resolve turns a field path (names, list keys, set values, indexes) into
// the map keys and list indexes it means in obj.
func resolve(obj any, p fieldpath.Path) ([]any, bool) {
	var steps []any
	cur := obj
	for _, pe := range p {
		if pe.FieldName != nil {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			steps, cur = append(steps, *pe.FieldName), m[*pe.FieldName]
			continue
		}
		list, ok := cur.([]any)
		if !ok {
			return nil, false
		}
		idx := -1
		if pe.Index != nil {
			if *pe.Index < len(list) {
				idx = *pe.Index
			}
		} else {
			idx = slices.IndexFunc(list, func(item any) bool { return elementMatches(pe, item) })
		}
		if idx < 0 {
			return nil, false
		}
		steps, cur = append(steps, idx), list[idx]
	}
	return steps, true
}

// elementMatches reports whether a list item is the one a set value or
// associative key names.
func elementMatches(pe fieldpath.PathElement, item any) bool {
	switch {
	case pe.Value != nil:
		return value.Equals(value.NewValueInterface(item), *pe.Value)
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			v, ok := m[f.Name]
			if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
				return false
			}
		}
		return true
	}
	return false
}
