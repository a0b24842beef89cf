package diff

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// KeepIgnored returns desired with the fields the ignore rules point at
// (JSON pointers and jq path expressions) taken from live: what a sync
// with RespectIgnoreDifferences=true applies, so that it leaves ignored
// differences as they are. A field live lacks is left out. desired is
// returned as it is when live is nil (a creation) or no rule applies.
func KeepIgnored(desired, live *unstructured.Unstructured, ignore []v1alpha1.ResourceIgnoreDifferences) (*unstructured.Unstructured, error) {
	rules := matching(ignore, desired)
	if live == nil || len(rules) == 0 {
		return desired, nil
	}
	out := desired.DeepCopy()
	for _, r := range rules {
		var paths [][]any
		for _, p := range r.JSONPointers {
			path, err := parsePointer(p)
			if err != nil {
				return nil, err
			}
			paths = append(paths, path)
		}
		for _, expr := range r.JQPathExpressions {
			for _, obj := range []map[string]any{desired.Object, live.Object} {
				found, err := jqPaths(obj, expr)
				if err != nil {
					return nil, err
				}
				paths = append(paths, found...)
			}
		}
		for _, path := range paths {
			if len(path) == 0 {
				continue
			}
			if v, ok := valueAt(live.Object, path); ok {
				if err := setPath(out.Object, path, v); err != nil {
					return nil, fmt.Errorf("keeping the live %v of %s/%s: %w", path, desired.GetKind(), desired.GetName(), err)
				}
				continue
			}
			removePath(out.Object, path)
		}
	}
	return out, nil
}

// valueAt returns a copy of the value at path, if there is one.
func valueAt(root any, path []any) (any, bool) {
	cur := root
	for _, step := range path {
		switch node := cur.(type) {
		case map[string]any:
			v, ok := node[fmt.Sprint(step)]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			idx, ok := index(step)
			if !ok || idx < 0 || idx >= len(node) {
				return nil, false
			}
			cur = node[idx]
		default:
			return nil, false
		}
	}
	return runtime.DeepCopyJSONValue(cur), true
}

// setPath sets the value at path, making the maps on the way; a list
// index past the end of its list is an error.
func setPath(root map[string]any, path []any, v any) error {
	var cur any = root
	for i, step := range path {
		last := i == len(path)-1
		switch node := cur.(type) {
		case map[string]any:
			key := fmt.Sprint(step)
			if last {
				node[key] = v
				return nil
			}
			next, ok := node[key]
			if !ok || next == nil {
				next = map[string]any{}
				node[key] = next
			}
			cur = next
		case []any:
			idx, ok := index(step)
			if !ok || idx < 0 || idx >= len(node) {
				return fmt.Errorf("index %v is not in the desired list", step)
			}
			if last {
				node[idx] = v
				return nil
			}
			cur = node[idx]
		default:
			return fmt.Errorf("%v is not an object or list in the desired state", step)
		}
	}
	return nil
}
