package diff

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestPointersAndPaths(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a/b": "1", "c~d": "2", "keep": "3"}},
		"spec":     map[string]any{"list": []any{"x", "y"}},
	}
	for _, p := range []string{"/metadata/annotations/a~1b", "/metadata/annotations/c~0d", "/spec/list/1", "/missing/path", "/spec/list/9"} {
		path, err := parsePointer(p)
		if err != nil {
			t.Fatal(err)
		}
		removePath(obj, path)
	}
	want := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"keep": "3"}},
		"spec":     map[string]any{"list": []any{"x", nil}},
	}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("got %v, want %v", obj, want)
	}
	if _, err := parsePointer("no-slash"); err == nil {
		t.Error("pointer without a leading slash accepted")
	}
}

// TestJQPathsAreBounded: an expression that never ends fails within
// JQTimeout instead of stalling the comparison.
func TestJQPathsAreBounded(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"a": 1}}
	if paths, err := jqPaths(obj, ".spec.a"); err != nil || len(paths) != 1 {
		t.Fatalf("a plain path: %v %v", paths, err)
	}
	_, err := jqPaths(obj, "def f: f; f")
	if err == nil || !strings.Contains(err.Error(), "not done within") {
		t.Errorf("an endless expression: %v", err)
	}
}

// TestAggregatedRoleRule: the rule argocd-cm's ignoreAggregatedRoles adds
// leaves out the rules of aggregating ClusterRoles only.
func TestAggregatedRoleRule(t *testing.T) {
	rule := []v1alpha1.ResourceIgnoreDifferences{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole",
		JQPathExpressions: []string{"select(.aggregationRule != null) | .rules"}}}
	role := func(aggregated bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": "r"}, "rules": []any{map[string]any{"verbs": []any{"get"}}}}}
		if aggregated {
			u.Object["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{}}
		}
		return u
	}
	for _, aggregated := range []bool{true, false} {
		u := role(aggregated)
		if err := removeIgnored(u, matching(rule, u)); err != nil {
			t.Fatal(err)
		}
		if _, has := u.Object["rules"]; has == aggregated {
			t.Errorf("aggregated=%v: rules kept=%v", aggregated, has)
		}
	}
}
