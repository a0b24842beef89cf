package controller

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

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
