// Package deeplinks evaluates the deep links of argocd-cm
// (application.links, resource.links, project.links) for one object, as
// Argo CD does: each link's condition is an expr-lang expression and its
// URL a Go template with sprig's functions, both over the same data
// (application, app, resource, cluster, project). A link whose condition
// or template fails is left out and the failure returned beside the
// links, so one bad link never hides the others.
package deeplinks

import (
	"errors"
	"fmt"
	"maps"

	"github.com/expr-lang/expr"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-cd/capstan/internal/safetext"
	"github.com/capstan-cd/capstan/internal/settings"
)

// maxURL bounds a rendered URL: a template that writes more is an error.
const maxURL = 64 << 10

// Link is a deep link as the API answers it.
type Link struct {
	Title       string  `json:"title"`
	URL         string  `json:"url"`
	Description *string `json:"description,omitempty"`
	IconClass   *string `json:"iconClass,omitempty"`
}

// Data is what links are evaluated over, by the names their templates
// and conditions use.
type Data map[string]any

// The names of Data, as Argo CD gives them.
const (
	KeyApplication = "application"
	KeyApp         = "app" // the same Application, shorter
	KeyResource    = "resource"
	KeyCluster     = "cluster"
	KeyProject     = "project"
)

// Set puts obj (a typed object or an unstructured map) under key as the
// plain map templates read; a nil obj leaves key out.
func (d Data) Set(key string, obj any) error {
	if obj == nil {
		return nil
	}
	if m, ok := obj.(map[string]any); ok {
		d[key] = m
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("deep link data %s: %w", key, err)
	}
	d[key] = m
	return nil
}

// Evaluate returns the links whose condition holds for data, with their
// URLs rendered, in their order; name (the object's) is put in errors.
func Evaluate(links []settings.DeepLink, data Data, name string) ([]Link, error) {
	out := []Link{}
	var errs []error
	env := map[string]any(maps.Clone(data))
	for _, l := range links {
		if l.If != nil {
			ok, err := condition(*l.If, env, name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue
			}
		}
		url, err := render(l.URL, data, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Link{Title: l.Title, URL: url, Description: l.Description, IconClass: l.IconClass})
	}
	return out, errors.Join(errs...)
}

func condition(cond string, env map[string]any, name string) (bool, error) {
	v, err := expr.Eval(cond, env)
	if err != nil {
		return false, fmt.Errorf("failed to evaluate link condition '%s' with resource %s: %w", cond, name, err)
	}
	ok, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("link condition '%s' evaluated to non-boolean value for resource %s", cond, name)
	}
	return ok, nil
}

func render(url string, data Data, name string) (string, error) {
	t, err := safetext.Parse("deep-link", url, nil)
	if err != nil {
		return "", fmt.Errorf("failed to parse link template '%s': %w", url, err)
	}
	out, err := t.Execute(map[string]any(data), maxURL, "the link")
	if err != nil {
		return "", fmt.Errorf("failed to evaluate link template '%s' with resource %s: %w", url, name, err)
	}
	return out, nil
}
