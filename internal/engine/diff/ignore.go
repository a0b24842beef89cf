package diff

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/objpath"
)

// matching returns the ignore rules that apply to obj: same group and kind
// (kind "*" matches any), and name and namespace when the rule sets them.
func matching(rules []v1alpha1.ResourceIgnoreDifferences, obj *unstructured.Unstructured) []v1alpha1.ResourceIgnoreDifferences {
	gvk := obj.GroupVersionKind()
	var out []v1alpha1.ResourceIgnoreDifferences
	for _, r := range rules {
		if r.Group != gvk.Group && r.Group != "*" {
			continue
		}
		if r.Kind != gvk.Kind && r.Kind != "*" {
			continue
		}
		if (r.Name != "" && r.Name != obj.GetName()) || (r.Namespace != "" && r.Namespace != obj.GetNamespace()) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// removeIgnored deletes the fields the rules point at (JSON pointers and
// jq path expressions, each bounded by jqTimeout, objpath.JQTimeout when 0)
// from obj.
func removeIgnored(obj *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences, jqTimeout time.Duration) error {
	for _, r := range rules {
		for _, p := range r.JSONPointers {
			path, err := objpath.Pointer(p)
			if err != nil {
				return err
			}
			objpath.Remove(obj.Object, path)
		}
		for _, expr := range r.JQPathExpressions {
			paths, err := objpath.JQ(context.Background(), obj.Object, expr, jqTimeout)
			if err != nil {
				return err
			}
			for _, path := range paths {
				objpath.Remove(obj.Object, path) // list items become nil: the other paths stay valid
			}
		}
	}
	return nil
}

// WithoutIgnored is a copy of obj without the fields the rules that
// apply to it point at (JSON pointers and jq path expressions; the
// managed-fields rules need the live object and are left out), and
// whether any rule applies. jqTimeout bounds each jq path expression
// (objpath.JQTimeout when 0).
func WithoutIgnored(obj *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences, jqTimeout time.Duration) (*unstructured.Unstructured, bool, error) {
	applies := matching(rules, obj)
	out := obj.DeepCopy()
	if err := removeIgnored(out, applies, jqTimeout); err != nil {
		return nil, false, err
	}
	return out, len(applies) > 0, nil
}

// Unchanged reports whether an update from old to new changed only fields
// the rules leave out (argocd-cm's ignoreResourceUpdates): such a change
// need not refresh the Application. jqTimeout bounds each jq path
// expression (objpath.JQTimeout when 0); one that fails counts as a change.
func Unchanged(old, new *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences, jqTimeout time.Duration) bool {
	a, b := old.DeepCopy(), new.DeepCopy()
	if removeIgnored(a, matching(rules, a), jqTimeout) != nil || removeIgnored(b, matching(rules, b), jqTimeout) != nil {
		return false
	}
	return reflect.DeepEqual(a.Object, b.Object)
}
