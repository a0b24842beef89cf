package actions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/engine/script"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Set is the actions an install offers: the built-in ones and argocd-cm's
// resource.customizations.actions.<group_kind> (Lua). A kind with custom
// actions offers only those, unless they say mergeBuiltinActions.
type Set struct {
	custom []customKind
}

// customKind is one argocd-cm action customization.
type customKind struct {
	key         string
	group, kind glob.Glob
	config      customConfig
	// broken is why the customization cannot be used: its kinds' actions
	// fail with it rather than fall back to the built-in ones.
	broken error
}

// customConfig is the YAML of an action customization, in Argo CD's form.
type customConfig struct {
	// Discovery returns a table of the actions offered on obj: name →
	// {disabled, iconClass, displayName}.
	Discovery   string `json:"discovery.lua"`
	Definitions []struct {
		Name   string `json:"name"`
		Action string `json:"action.lua"`
	} `json:"definitions"`
	MergeBuiltinActions bool `json:"mergeBuiltinActions"`
}

// NewSet reads cm's action customizations. One that cannot be read is
// named in the error and left out; the others apply.
func NewSet(cm map[string]string) (*Set, error) {
	cs, err := (&settings.ArgoCD{Data: cm}).Customizations("actions")
	errs := []error{err}
	s := &Set{}
	for _, c := range cs {
		k, err := parseCustom(c)
		if k.group == nil || k.kind == nil {
			errs = append(errs, err)
			continue
		}
		k.broken = err
		errs = append(errs, err)
		s.custom = append(s.custom, k)
	}
	return s, errors.Join(errs...)
}

func parseCustom(c settings.Customization) (customKind, error) {
	k := customKind{key: c.Key}
	var err error
	if k.group, err = glob.Compile(c.Group); err != nil {
		return k, fmt.Errorf("argocd-cm %s: group %q: %w", c.Key, c.Group, err)
	}
	if k.kind, err = glob.Compile(c.Kind); err != nil {
		return k, fmt.Errorf("argocd-cm %s: kind %q: %w", c.Key, c.Kind, err)
	}
	if err := yaml.Unmarshal([]byte(c.Value), &k.config); err != nil {
		return k, fmt.Errorf("argocd-cm %s: %w", c.Key, err)
	}
	if err := script.Compile(k.config.Discovery); err != nil {
		return k, fmt.Errorf("argocd-cm %s: discovery.lua does not compile: %w", c.Key, err)
	}
	for _, d := range k.config.Definitions {
		if err := script.Compile(d.Action); err != nil {
			return k, fmt.Errorf("argocd-cm %s: action %s does not compile: %w", c.Key, d.Name, err)
		}
	}
	return k, nil
}

// customFor is the customization of obj's kind, if any.
func (s *Set) customFor(obj *unstructured.Unstructured) (customKind, bool) {
	gk := obj.GroupVersionKind().GroupKind()
	for _, k := range s.custom {
		if k.group.Match(gk.Group) && k.kind.Match(gk.Kind) {
			return k, true
		}
	}
	return customKind{}, false
}

// For lists the actions offered on obj.
func (s *Set) For(ctx context.Context, obj *unstructured.Unstructured) ([]Action, error) {
	k, ok := s.customFor(obj)
	if !ok {
		return For(obj), nil
	}
	if k.broken != nil {
		return nil, k.broken
	}
	custom, err := k.discover(ctx, obj)
	if err != nil {
		return nil, err
	}
	if !k.config.MergeBuiltinActions {
		return custom, nil
	}
	out := custom
	for _, a := range For(obj) {
		if !containsAction(custom, a.Name) {
			out = append(out, a)
		}
	}
	return out, nil
}

func containsAction(list []Action, name string) bool {
	for _, a := range list {
		if a.Name == name {
			return true
		}
	}
	return false
}

// discover runs the kind's discovery.lua on obj.
func (k customKind) discover(ctx context.Context, obj *unstructured.Unstructured) ([]Action, error) {
	ret, err := script.Run(ctx, k.config.Discovery, obj.DeepCopy().Object, nil)
	if err != nil {
		return nil, fmt.Errorf("argocd-cm %s: discovery.lua: %w", k.key, err)
	}
	table, ok := ret.(map[string]any)
	if !ok {
		if list, isList := ret.([]any); isList && len(list) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("argocd-cm %s: discovery.lua must return a table of actions by name", k.key)
	}
	var out []Action
	for name, v := range table {
		a := Action{Name: name}
		if attrs, ok := v.(map[string]any); ok {
			a.Disabled, _ = attrs["disabled"].(bool)
			a.IconClass, _ = attrs["iconClass"].(string)
			a.DisplayName, _ = attrs["displayName"].(string)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Run runs the named action on a copy of obj with params (the action's
// parameters, as actionParams); now stamps what a built-in one records.
func (s *Set) Run(ctx context.Context, obj *unstructured.Unstructured, name string, params map[string]string, now time.Time) (Result, error) {
	k, ok := s.customFor(obj)
	if !ok {
		return Run(obj, name, now)
	}
	offered, err := s.For(ctx, obj)
	if err != nil {
		return Result{}, err
	}
	for _, a := range offered {
		if a.Name == name && a.Disabled {
			return Result{}, fmt.Errorf("action %s is disabled for %s/%s", name, obj.GetKind(), obj.GetName())
		}
	}
	for _, d := range k.config.Definitions {
		if d.Name == name && containsAction(offered, name) {
			return k.run(ctx, obj, d.Action, params)
		}
	}
	if k.config.MergeBuiltinActions {
		return Run(obj, name, now)
	}
	return Result{}, ErrUnknown{Action: name, Kind: obj.GetKind()}
}
