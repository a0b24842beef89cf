package diff

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MaskSecret replaces the values of a Secret's data and stringData in both
// versions (either may be nil) with runs of '+', so no diff, API response
// or log ever shows them, while a changed value still shows as changed:
// equal values get equal masks, different values different ones, as Argo
// CD shows them. Other kinds are returned as they are.
func MaskSecret(desired, live *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if !isSecret(desired) && !isSecret(live) {
		return desired, live
	}
	masks := map[string]string{}
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
				if _, seen := masks[v]; !seen {
					masks[v] = strings.Repeat("+", 8+len(masks))
				}
				values[k] = masks[v]
			}
		}
		if a := obj.GetAnnotations(); a != nil {
			// The last applied configuration would carry the values too.
			delete(a, "kubectl.kubernetes.io/last-applied-configuration")
			obj.SetAnnotations(a)
		}
		return obj
	}
	return mask(desired), mask(live)
}

func isSecret(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}
