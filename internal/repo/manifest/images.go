package manifest

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podSpecPaths are where each workload kind keeps its pod spec.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"Deployment":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
	"Rollout":               {"spec", "template", "spec"},
}

// Images returns the sorted, distinct container images of the objects'
// containers, init containers and ephemeral containers.
func Images(objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	for _, obj := range objs {
		path, ok := podSpecPaths[obj.GetKind()]
		if !ok {
			continue
		}
		spec, found, _ := unstructured.NestedMap(obj.Object, path...)
		if !found {
			continue
		}
		for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
			containers, _, _ := unstructured.NestedSlice(spec, field)
			for _, c := range containers {
				if m, ok := c.(map[string]any); ok {
					if img, ok := m["image"].(string); ok && img != "" {
						seen[img] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for img := range seen {
		out = append(out, img)
	}
	sort.Strings(out)
	return out
}
