package actions

import (
	"context"
	"errors"
	"fmt"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/engine/script"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Set is the actions an install offers: the built-in library and
// argocd-cm's resource.customizations.actions.<group_kind>. As in Argo
// CD, a kind with custom actions lists only those unless they say
// mergeBuiltinActions (the custom ones first, winning a name both have),
// and an action runs its custom definition if there is one, else the
// built-in one of that name.
type Set struct {
	custom  []customKind
	library map[schema.GroupKind]scripts
}

// customKind is one argocd-cm action customization.
type customKind struct {
	group, kind *glob.Pattern
	merge       bool
	scripts
}

// customConfig is the YAML of an action customization, in Argo CD's form.
type customConfig struct {
	Discovery   string `json:"discovery.lua"`
	Definitions []struct {
		Name   string `json:"name"`
		Action string `json:"action.lua"`
	} `json:"definitions"`
	MergeBuiltinActions bool `json:"mergeBuiltinActions"`
}

// NewSet reads cm's action customizations over the built-in library. One
// that cannot be read is named in the error: if its kinds are known its
// actions fail with that error, else it is left out; the others apply.
func NewSet(cm map[string]string) (*Set, error) {
	cs, err := (&settings.ArgoCD{Data: cm}).Customizations("actions")
	errs := []error{err}
	s := &Set{library: builtinLibrary()}
	for _, c := range cs {
		k, err := parseCustom(c)
		errs = append(errs, err)
		if k.group != nil && k.kind != nil {
			s.custom = append(s.custom, k)
		}
	}
	return s, errors.Join(errs...)
}

func parseCustom(c settings.Customization) (customKind, error) {
	k := customKind{scripts: scripts{source: "argocd-cm " + c.Key, byName: map[string]*script.Program{}}}
	var err error
	if k.group, err = glob.Compile(c.Group); err != nil {
		return k, fmt.Errorf("argocd-cm %s: group %q: %w", c.Key, c.Group, err)
	}
	if k.kind, err = glob.Compile(c.Kind); err != nil {
		return k, fmt.Errorf("argocd-cm %s: kind %q: %w", c.Key, c.Kind, err)
	}
	var config customConfig
	if err := yaml.Unmarshal([]byte(c.Value), &config); err != nil {
		k.broken = fmt.Errorf("argocd-cm %s: %w", c.Key, err)
		return k, k.broken
	}
	k.merge = config.MergeBuiltinActions
	if config.Discovery != "" {
		if k.discovery, err = script.Prepare(config.Discovery); err != nil {
			k.broken = fmt.Errorf("argocd-cm %s: discovery.lua does not compile: %w", c.Key, err)
			return k, k.broken
		}
	}
	for _, d := range config.Definitions {
		if k.byName[d.Name], err = script.Prepare(d.Action); err != nil {
			k.broken = fmt.Errorf("argocd-cm %s: action %s does not compile: %w", c.Key, d.Name, err)
			return k, k.broken
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

// sources are the scripts that list obj's actions, first wins.
func (s *Set) sources(obj *unstructured.Unstructured) []scripts {
	var out []scripts
	custom, ok := s.customFor(obj)
	if ok {
		out = append(out, custom.scripts)
		if !custom.merge {
			return out
		}
	}
	if lib, ok := s.library[obj.GroupVersionKind().GroupKind()]; ok {
		out = append(out, lib)
	}
	return out
}

// For lists the actions offered on obj, by name.
func (s *Set) For(ctx context.Context, obj *unstructured.Unstructured) ([]Action, error) {
	var out []Action
	for _, src := range s.sources(obj) {
		if src.broken != nil {
			return nil, src.broken
		}
		list, err := src.discover(ctx, obj)
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			if !containsAction(out, a.Name) {
				out = append(out, a)
			}
		}
	}
	sortActions(out)
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

// Run runs the named action on a copy of obj with params (the action's
// parameters, as actionParams). As in Argo CD, whether discovery lists
// the action as disabled is the UI's concern: the action itself decides
// what it does to the object as it is.
func (s *Set) Run(ctx context.Context, obj *unstructured.Unstructured, name string, params map[string]string) (Result, error) {
	owner, err := s.definition(obj, name)
	if err != nil {
		return Result{}, err
	}
	return owner.run(ctx, obj, name, params)
}

// definition is the scripts holding the named action of obj's kind.
func (s *Set) definition(obj *unstructured.Unstructured, name string) (scripts, error) {
	if custom, ok := s.customFor(obj); ok {
		if custom.broken != nil {
			return scripts{}, custom.broken
		}
		if custom.byName[name] != nil {
			return custom.scripts, nil
		}
	}
	lib, ok := s.library[obj.GroupVersionKind().GroupKind()]
	if ok && lib.byName[name] != nil {
		return lib, lib.broken
	}
	return scripts{}, ErrUnknown{Action: name, Kind: obj.GetKind()}
}
