package actions

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/engine/script"
)

// Operations a Lua action may ask for on the objects it returns, as Argo
// CD names them.
const (
	operationPatch  = "patch"
	operationCreate = "create"
)

// run runs an action.lua on a copy of obj. The script returns the object
// changed, or a list of {operation = "patch"|"create", resource = object}.
func (k customKind) run(ctx context.Context, obj *unstructured.Unstructured, src string, params map[string]string) (Result, error) {
	p := make(map[string]any, len(params))
	for n, v := range params {
		p[n] = v
	}
	ret, err := script.Run(ctx, src, obj.DeepCopy().Object, map[string]any{"actionParams": p})
	if err != nil {
		return Result{}, fmt.Errorf("argocd-cm %s: %w", k.key, err)
	}
	switch v := ret.(type) {
	case map[string]any:
		return Result{Modified: patched(obj, v)}, nil
	case []any:
		return k.impacted(obj, v)
	}
	return Result{}, fmt.Errorf("argocd-cm %s: the action must return the object or a list of {operation, resource}", k.key)
}

// impacted reads the new form of an action's result.
func (k customKind) impacted(obj *unstructured.Unstructured, list []any) (Result, error) {
	var res Result
	for i, item := range list {
		entry, _ := item.(map[string]any)
		resource, _ := entry["resource"].(map[string]any)
		if resource == nil {
			return Result{}, fmt.Errorf("argocd-cm %s: result %d has no resource", k.key, i+1)
		}
		switch op, _ := entry["operation"].(string); op {
		case operationPatch:
			u := &unstructured.Unstructured{Object: resource}
			if u.GroupVersionKind().GroupKind() != obj.GroupVersionKind().GroupKind() || u.GetName() != obj.GetName() || u.GetNamespace() != obj.GetNamespace() {
				return Result{}, fmt.Errorf("argocd-cm %s: result %d patches %s/%s, not the object the action ran on", k.key, i+1, u.GetKind(), u.GetName())
			}
			res.Modified = patched(obj, resource)
		case operationCreate:
			u := &unstructured.Unstructured{Object: resource}
			if u.GetNamespace() == "" {
				u.SetNamespace(obj.GetNamespace())
			}
			res.Created = append(res.Created, u)
		default:
			return Result{}, fmt.Errorf("argocd-cm %s: result %d: operation %q, want patch or create", k.key, i+1, op)
		}
	}
	return res, nil
}

// patched is the object a script returned, with the empty tables Lua
// cannot tell from empty lists made lists where obj had lists.
func patched(obj *unstructured.Unstructured, returned map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: fixEmpty(returned, obj.Object).(map[string]any)}
}

func fixEmpty(v, orig any) any {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			if _, wasList := orig.([]any); wasList {
				return []any{}
			}
			return t
		}
		om, _ := orig.(map[string]any)
		for k, val := range t {
			t[k] = fixEmpty(val, om[k])
		}
		return t
	case []any:
		ol, _ := orig.([]any)
		for i := range t {
			var o any
			if i < len(ol) {
				o = ol[i]
			}
			t[i] = fixEmpty(t[i], o)
		}
		return t
	}
	return v
}
