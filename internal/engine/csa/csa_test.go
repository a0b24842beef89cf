package csa

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func ExamplePatch() {
	cm := func(labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "web", "labels": labels}}}
	}
	applied, _ := WithLastApplied(cm(map[string]any{"team": "a", "tier": "web"}))
	live := applied.DeepCopy()
	live.SetLabels(map[string]string{"team": "a", "tier": "web", "added": "by-hand"}) // someone else's label
	modified, _ := WithLastApplied(cm(map[string]any{"team": "a"}))                   // Git dropped tier
	patch, kind, _ := Patch(modified, live)
	var p struct {
		Metadata struct {
			Labels map[string]any `json:"labels"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(patch, &p)
	fmt.Println(kind)
	fmt.Println(p.Metadata.Labels) // tier removed; the added label untouched
	// Output:
	// application/strategic-merge-patch+json
	// map[tier:<nil>]
}
