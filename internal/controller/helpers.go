package controller

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func groupVersionKind(s v1alpha1.ResourceStatus) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
}

// isHook reports whether an object is a sync hook; hooks are run by syncs,
// not compared or pruned.
func isHook(obj *unstructured.Unstructured) bool {
	return v1alpha1.IsHook(obj.GetAnnotations())
}

func dedupe(vals []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
