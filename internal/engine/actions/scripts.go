package actions

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/engine/script"
)

// scripts are the actions of one kind, from the library or argocd-cm: a
// discovery script that lists them and one script per action.
type scripts struct {
	// source names them in errors: "argocd-cm <key>" or "built-in <group>/<Kind>".
	source    string
	discovery *script.Program // nil when there is none
	byName    map[string]*script.Program
	// broken is why they cannot be used: their kind's actions fail with
	// it rather than fall back to others.
	broken error
}

// discover runs the discovery script on obj: the table it returns names
// each action offered, with its {disabled, iconClass, displayName,
// params}.
func (s scripts) discover(ctx context.Context, obj *unstructured.Unstructured) ([]Action, error) {
	if s.discovery == nil {
		return nil, nil
	}
	ret, err := s.discovery.Run(ctx, obj.DeepCopy().Object, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: discovery.lua: %w", s.source, err)
	}
	var table map[string]any
	switch v := ret.(type) {
	case map[string]any:
		table = v
	case []any:
		if len(v) > 0 {
			return nil, fmt.Errorf("%s: discovery.lua must return a table of actions by name, not a list", s.source)
		}
	default:
		return nil, fmt.Errorf("%s: discovery.lua must return a table of actions by name", s.source)
	}
	out := make([]Action, 0, len(table))
	for name, v := range table {
		attrs, _ := v.(map[string]any)
		out = append(out, actionOf(name, attrs))
	}
	sortActions(out)
	return out, nil
}

func sortActions(list []Action) {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
}

// actionOf reads one entry of a discovery table.
func actionOf(name string, attrs map[string]any) Action {
	a := Action{Name: name}
	a.Disabled, _ = attrs["disabled"].(bool)
	a.IconClass = text(attrs["iconClass"])
	a.DisplayName = text(attrs["displayName"])
	params, _ := attrs["params"].([]any)
	for _, p := range params {
		fields, _ := p.(map[string]any)
		a.Params = append(a.Params, Param{Name: text(fields["name"])})
	}
	return a
}

// text is a scalar a script returned, as text; "" for anything else.
func text(v any) string {
	switch v.(type) {
	case string, int64, float64, bool:
		return fmt.Sprint(v)
	}
	return ""
}

// Operations an action may ask for on the objects it returns, as Argo CD
// names them.
const (
	operationPatch  = "patch"
	operationCreate = "create"
)

// run runs the named action on a copy of obj, params set as the global
// actionParams. The script returns the object changed, or a list of
// {operation = "patch"|"create", resource = object}.
func (s scripts) run(ctx context.Context, obj *unstructured.Unstructured, name string, params map[string]string) (Result, error) {
	p := make(map[string]any, len(params))
	for n, v := range params {
		p[n] = v
	}
	ret, err := s.byName[name].Run(ctx, obj.DeepCopy().Object, map[string]any{"actionParams": p})
	if err != nil {
		return Result{}, fmt.Errorf("%s action %s: %w", s.source, name, err)
	}
	switch v := ret.(type) {
	case map[string]any:
		return Result{Modified: patched(obj, v)}, nil
	case []any:
		return s.impacted(obj, name, v)
	}
	return Result{}, fmt.Errorf("%s action %s: the action must return the object or a list of {operation, resource}", s.source, name)
}

// impacted reads the list form of an action's result.
func (s scripts) impacted(obj *unstructured.Unstructured, name string, list []any) (Result, error) {
	var res Result
	for i, item := range list {
		entry, _ := item.(map[string]any)
		resource, _ := entry["resource"].(map[string]any)
		if resource == nil {
			return Result{}, fmt.Errorf("%s action %s: result %d has no resource", s.source, name, i+1)
		}
		switch op, _ := entry["operation"].(string); op {
		case operationPatch:
			u := &unstructured.Unstructured{Object: resource}
			if u.GroupVersionKind().GroupKind() != obj.GroupVersionKind().GroupKind() || u.GetName() != obj.GetName() || u.GetNamespace() != obj.GetNamespace() {
				return Result{}, fmt.Errorf("%s action %s: result %d patches %s/%s, not the object the action ran on", s.source, name, i+1, u.GetKind(), u.GetName())
			}
			res.Modified = patched(obj, resource)
		case operationCreate:
			u := &unstructured.Unstructured{Object: resource}
			if u.GetNamespace() == "" {
				u.SetNamespace(obj.GetNamespace())
			}
			res.Created = append(res.Created, u)
		default:
			return Result{}, fmt.Errorf("%s action %s: result %d: operation %q, want patch or create", s.source, name, i+1, op)
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
