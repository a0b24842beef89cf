package actions

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const scaleAction = `discovery.lua: |
  return {scale = {displayName = "Scale", iconClass = "fa fa-fw fa-arrows"}, ["spawn-job"] = {}}
definitions:
- name: scale
  action.lua: |
    obj.spec.replicas = tonumber(actionParams.replicas)
    obj.spec.template.spec.tolerations = {}
    return obj
- name: spawn-job
  action.lua: |
    local job = {apiVersion = "batch/v1", kind = "Job", metadata = {name = obj.metadata.name .. "-job"}, spec = {}}
    return {{operation = "create", resource = job}, {operation = "patch", resource = obj}}
`

func deployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod"},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"tolerations": []any{map[string]any{"key": "k"}}}}}}}
}

func TestCustomActions(t *testing.T) {
	ctx := context.Background()
	set, err := NewSet(map[string]string{"resource.customizations.actions.apps_Deployment": scaleAction})
	if err != nil {
		t.Fatal(err)
	}
	list, err := set.For(ctx, deployment())
	if err != nil || len(list) != 2 || list[0].Name != "scale" || list[0].DisplayName != "Scale" || list[1].Name != "spawn-job" {
		t.Fatalf("custom actions replace the built-in restart: %+v, %v", list, err)
	}
	res, err := set.Run(ctx, deployment(), "scale", map[string]string{"replicas": "3"})
	if err != nil {
		t.Fatal(err)
	}
	spec := res.Modified.Object["spec"].(map[string]any)
	tolerations := spec["template"].(map[string]any)["spec"].(map[string]any)["tolerations"]
	if spec["replicas"] != int64(3) || tolerations == nil || len(tolerations.([]any)) != 0 {
		t.Errorf("scaled: %v (an emptied list stays a list)", spec)
	}
	res, err = set.Run(ctx, deployment(), "spawn-job", nil)
	if err != nil || len(res.Created) != 1 || res.Created[0].GetName() != "web-job" || res.Created[0].GetNamespace() != "prod" || res.Modified == nil {
		t.Errorf("spawn-job: %+v, %v", res, err)
	}
	if res, err := set.Run(ctx, deployment(), "restart", nil); err != nil || res.Modified == nil {
		t.Errorf("restart, not listed, still runs the built-in one as in Argo CD: %v", err)
	}

	merged, _ := NewSet(map[string]string{"resource.customizations.actions.apps_Deployment": "mergeBuiltinActions: true\n" + scaleAction})
	if list, _ := merged.For(ctx, deployment()); listed(list) != "pause restart resume* scale spawn-job" || list[3].DisplayName != "Scale" {
		t.Errorf("merged: %+v", list)
	}
	if res, err := merged.Run(ctx, deployment(), "restart", nil); err != nil || res.Modified == nil {
		t.Errorf("merged restart: %v", err)
	}

	broken, err := NewSet(map[string]string{"resource.customizations.actions.apps_Deployment": "discovery.lua: |\n  return {\n"})
	if err == nil || !strings.Contains(err.Error(), "discovery.lua does not compile") {
		t.Errorf("a broken script: %v", err)
	}
	if _, err := broken.For(ctx, deployment()); err == nil {
		t.Error("a broken customization fell back to the built-in actions")
	}
	for script, want := range map[string]string{
		"return 1": "must return the object",
		`return {{operation = "delete", resource = obj}}`:                                        `operation "delete"`,
		`return {{operation = "patch", resource = {kind = "Service", metadata = {name = "x"}}}}`: "not the object",
	} {
		s, err := NewSet(map[string]string{"resource.customizations.actions.apps_Deployment": "discovery.lua: 'return {a = {}}'\ndefinitions:\n- name: a\n  action.lua: '" + strings.ReplaceAll(script, "'", "''") + "'\n"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx, deployment(), "a", nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", script, err, want)
		}
	}
}
