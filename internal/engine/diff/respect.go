package diff

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/objpath"
)

// KeepIgnored returns desired with the fields the ignore rules point at
// (JSON pointers and jq path expressions) taken from live: what a sync
// with RespectIgnoreDifferences=true applies, so that it leaves ignored
// differences as they are. A field live lacks is left out. desired is
// returned as it is when live is nil (a creation) or no rule applies.
// jqTimeout bounds each jq path expression (objpath.JQTimeout when 0).
func KeepIgnored(desired, live *unstructured.Unstructured, ignore []v1alpha1.ResourceIgnoreDifferences, jqTimeout time.Duration) (*unstructured.Unstructured, error) {
	rules := matching(ignore, desired)
	if live == nil || len(rules) == 0 {
		return desired, nil
	}
	out := desired.DeepCopy()
	for _, r := range rules {
		var paths []objpath.Path
		for _, p := range r.JSONPointers {
			path, err := objpath.Pointer(p)
			if err != nil {
				return nil, err
			}
			paths = append(paths, path)
		}
		for _, expr := range r.JQPathExpressions {
			for _, obj := range []map[string]any{desired.Object, live.Object} {
				found, err := objpath.JQ(context.Background(), obj, expr, jqTimeout)
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
			if v, ok := objpath.Get(live.Object, path); ok {
				if err := objpath.Set(out.Object, path, runtime.DeepCopyJSONValue(v)); err != nil {
					return nil, fmt.Errorf("keeping the live %v of %s/%s: %w", path, desired.GetKind(), desired.GetName(), err)
				}
				continue
			}
			objpath.Remove(out.Object, path)
		}
	}
	return out, nil
}
