package diff

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastApplied is kubectl's copy of the object as last applied; on a
// Secret it holds the values.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Masker hides what must never leave Capstan: the values of a Secret's
// data and stringData, the annotations named as sensitive, and kubectl's
// last applied configuration of a Secret. The zero Masker masks values
// only. Every answer that can show an object goes through one.
type Masker struct {
	// Annotations are the annotation keys whose values are masked on
	// Secrets (argocd-cm's resource.sensitive.mask.annotations).
	Annotations []string
}

// MaskSecret masks with the zero Masker.
func MaskSecret(desired, live *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	return Masker{}.Mask(desired, live)
}

// Mask replaces the hidden values in both versions of an object (either
// may be nil) with runs of '+', so no diff, API response or log ever shows
// them, while a changed value still shows as changed: equal values get
// equal masks, different values different ones, as Argo CD shows them.
// Other kinds than Secret are returned as they are; masked objects are
// copies.
func (m Masker) Mask(desired, live *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if !isSecret(desired) && !isSecret(live) {
		return desired, live
	}
	masks := map[string]string{}
	maskOf := func(v string) string {
		if _, seen := masks[v]; !seen {
			masks[v] = strings.Repeat("+", 8+len(masks))
		}
		return masks[v]
	}
	mask := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		if obj == nil {
			return nil
		}
		obj = obj.DeepCopy()
		for _, field := range []string{"data", "stringData"} {
			values, ok := obj.Object[field].(map[string]any)
			if !ok {
				continue
			}
			keys := make([]string, 0, len(values))
			for k := range values {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v, _ := values[k].(string)
				values[k] = maskOf(v)
			}
		}
		if a := obj.GetAnnotations(); a != nil {
			delete(a, lastApplied)
			keys := make([]string, 0, len(a))
			for k := range a {
				if slices.Contains(m.Annotations, k) {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				a[k] = maskOf(a[k])
			}
			obj.SetAnnotations(a)
		}
		return obj
	}
	return mask(desired), mask(live)
}

// MaskAll masks each object on its own.
func (m Masker) MaskAll(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, obj := range objs {
		out[i], _ = m.Mask(obj, nil)
	}
	return out
}

func isSecret(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}
