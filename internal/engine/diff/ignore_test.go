package diff

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/objpath"
)

// TestPointersAndPaths: the rules' JSON pointers remove what they name,
// escaped or in a list, and ignore what is not there.
func TestPointersAndPaths(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a/b": "1", "c~d": "2", "keep": "3"}},
		"spec":     map[string]any{"list": []any{"x", "y"}},
	}}
	rules := []v1alpha1.ResourceIgnoreDifferences{{JSONPointers: []string{
		"/metadata/annotations/a~1b", "/metadata/annotations/c~0d", "/spec/list/1", "/missing/path", "/spec/list/9"}}}
	if err := removeIgnored(obj, rules, 0); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"keep": "3"}},
		"spec":     map[string]any{"list": []any{"x", nil}},
	}
	if !reflect.DeepEqual(obj.Object, want) {
		t.Errorf("got %v, want %v", obj.Object, want)
	}
	bad := []v1alpha1.ResourceIgnoreDifferences{{JSONPointers: []string{"no-slash"}}}
	if err := removeIgnored(obj, bad, 0); err == nil {
		t.Error("pointer without a leading slash accepted")
	}
}

// TestJQPathsAreBounded: an expression that never ends fails within
// objpath.JQTimeout instead of stalling the comparison.
func TestJQPathsAreBounded(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"a": int64(1), "b": int64(2)}}}
	if err := removeIgnored(obj, []v1alpha1.ResourceIgnoreDifferences{{JQPathExpressions: []string{".spec.a"}}}, 0); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"spec": map[string]any{"b": int64(2)}}; !reflect.DeepEqual(obj.Object, want) {
		t.Errorf("after .spec.a: %v", obj.Object)
	}
	endless := []v1alpha1.ResourceIgnoreDifferences{{JQPathExpressions: []string{"def f: f; f"}}}
	for _, timeout := range []time.Duration{0, 20 * time.Millisecond} { // the default, and a configured bound
		if err := removeIgnored(obj, endless, timeout); !errors.Is(err, objpath.ErrTimeout) {
			t.Errorf("an endless expression within %v: %v", timeout, err)
		}
	}
	if _, _, err := WithoutIgnored(obj, endless, 20*time.Millisecond); !errors.Is(err, objpath.ErrTimeout) {
		t.Errorf("WithoutIgnored: %v", err)
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
		if err := removeIgnored(u, matching(rule, u), 0); err != nil {
			t.Fatal(err)
		}
		if _, has := u.Object["rules"]; has == aggregated {
			t.Errorf("aggregated=%v: rules kept=%v", aggregated, has)
		}
	}
}
