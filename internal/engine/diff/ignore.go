package diff

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
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
// jq path expressions) from obj.
func removeIgnored(obj *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) error {
	for _, r := range rules {
		for _, p := range r.JSONPointers {
			path, err := parsePointer(p)
			if err != nil {
				return err
			}
			removePath(obj.Object, path)
		}
		for _, expr := range r.JQPathExpressions {
			paths, err := jqPaths(obj.Object, expr)
			if err != nil {
				return err
			}
			// Delete the deepest paths first so list indexes stay valid.
			for i := len(paths) - 1; i >= 0; i-- {
				removePath(obj.Object, paths[i])
			}
		}
	}
	return nil
}

// parsePointer splits an RFC 6901 pointer into its unescaped tokens.
func parsePointer(p string) ([]any, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("JSON pointer %q must start with /", p)
	}
	var out []any
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		out = append(out, tok)
	}
	return out, nil
}

// JQTimeout bounds the evaluation of one jq path expression of an ignore
// rule, as Argo CD's ignore.normalizer.jq.timeout does (default 1s): a
// rule written to loop forever fails instead of stalling comparisons.
const JQTimeout = time.Second

// jqPaths evaluates path(expr) over obj, within JQTimeout.
func jqPaths(obj map[string]any, expr string) ([][]any, error) {
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), JQTimeout)
	defer cancel()
	var paths [][]any
	iter := q.RunWithContext(ctx, obj)
	for {
		v, ok := iter.Next()
		if !ok {
			return paths, nil
		}
		if err, isErr := v.(error); isErr {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("jq path expression %q: not done within %s", expr, JQTimeout)
			}
			return nil, fmt.Errorf("jq path expression %q: %w", expr, err)
		}
		if p, ok := v.([]any); ok {
			paths = append(paths, p)
		}
	}
}

// removePath deletes the value at path (map keys and list indexes) if present.
func removePath(root any, path []any) {
	if len(path) == 0 {
		return
	}
	cur := root
	for i, step := range path {
		last := i == len(path)-1
		switch node := cur.(type) {
		case map[string]any:
			key := fmt.Sprint(step)
			if last {
				delete(node, key)
				return
			}
			cur = node[key]
		case []any:
			idx, ok := index(step)
			if !ok || idx < 0 || idx >= len(node) {
				return
			}
			if last {
				node[idx] = nil // keep other indexes stable; nil compares equal on both sides
				return
			}
			cur = node[idx]
		default:
			return
		}
	}
}

func index(step any) (int, bool) {
	switch s := step.(type) {
	case int:
		return s, true
	case float64:
		return int(s), true
	case string:
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	return 0, false
}

// Unchanged reports whether an update from old to new changed only fields
// the rules leave out (argocd-cm's ignoreResourceUpdates): such a change
// need not refresh the Application.
func Unchanged(old, new *unstructured.Unstructured, rules []v1alpha1.ResourceIgnoreDifferences) bool {
	a, b := old.DeepCopy(), new.DeepCopy()
	if removeIgnored(a, matching(rules, a)) != nil || removeIgnored(b, matching(rules, b)) != nil {
		return false
	}
	return reflect.DeepEqual(a.Object, b.Object)
}
