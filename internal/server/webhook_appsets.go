package server

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// webhookAppSets lists the ApplicationSets a webhook may concern: of the
// control namespace from the cache and, when Applications live in other
// namespaces too (--application-namespaces), of every namespace from the
// API server, falling back to the control namespace where the server may
// not list them cluster-wide (a namespace install).
func (s *Server) webhookAppSets(ctx context.Context) (*v1alpha1.ApplicationSetList, error) {
	list := &v1alpha1.ApplicationSetList{}
	if len(s.opts.ApplicationNamespaces) > 0 && s.watcher != nil {
		err := s.watcher.List(ctx, list)
		if err == nil {
			return list, nil
		}
		if !apierrors.IsForbidden(err) {
			return nil, err
		}
	}
	return list, s.opts.Client.List(ctx, list, client.InNamespace(s.opts.Namespace))
}

// refreshAppSets marks the ApplicationSets of the control namespace (and
// of the other namespaces Applications may live in) that
// a webhook event concerns, so the ApplicationSet controller runs them now
// instead of at their next period, as Argo CD does: those whose git
// generators read the pushed repository at the pushed branch (p), whose
// pull request generators list the repository of a pull request event
// (pr), and every one with a plugin generator — at any depth of matrix and
// merge.
func (s *Server) refreshAppSets(ctx context.Context, p *push, pr *prEvent) error {
	list, err := s.webhookAppSets(ctx)
	if err != nil {
		return err
	}
	for i := range list.Items {
		as := &list.Items[i]
		if !s.namespaceEnabled(as.Namespace) || !concerns(as, p, pr) {
			continue
		}
		patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationApplicationSetRefresh + `":"true"}}}`)
		if err := s.opts.Client.Patch(ctx, as, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			return fmt.Errorf("refreshing ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
		}
	}
	return nil
}

// concerns reports whether an event concerns one of the set's generators.
func concerns(as *v1alpha1.ApplicationSet, p *push, pr *prEvent) bool {
	return anyGenerator(as, func(kind string, raw []byte) bool {
		switch kind {
		case "plugin":
			return true
		case "git":
			var g v1alpha1.GitGenerator
			return p != nil && json.Unmarshal(raw, &g) == nil && readsPush(&g, p)
		case "pullRequest":
			var g v1alpha1.PullRequestGenerator
			return pr != nil && json.Unmarshal(raw, &g) == nil && pr.lists(&g)
		}
		return false
	})
}

// anyGenerator reports whether match says yes to one of the set's git,
// pullRequest or plugin generators at any depth of matrix and merge
// (nested ones are raw JSON), given its kind and JSON.
func anyGenerator(as *v1alpha1.ApplicationSet, match func(kind string, raw []byte) bool) bool {
	data, err := json.Marshal(as.Spec.Generators)
	if err != nil {
		return false
	}
	var tree any
	if json.Unmarshal(data, &tree) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for _, kind := range []string{"git", "pullRequest", "plugin"} {
				if g, ok := v[kind].(map[string]any); ok {
					if raw, err := json.Marshal(g); err == nil && match(kind, raw) {
						return true
					}
				}
			}
			for key, child := range v {
				if !opaque[key] && walk(child) {
					return true
				}
			}
		case []any:
			for _, child := range v {
				if walk(child) {
					return true
				}
			}
		}
		return false
	}
	return walk(tree)
}

// opaque are the generator fields holding user data rather than
// generators, never searched for them.
var opaque = map[string]bool{"elements": true, "template": true, "values": true, "input": true, "elementsYaml": true}

// readsPush reports whether a git generator reads the pushed repository
// at the pushed ref (HEAD and an empty revision read the default branch).
func readsPush(g *v1alpha1.GitGenerator, p *push) bool {
	same := false
	for _, u := range p.urls {
		same = same || (u != "" && git.NormalizeURL(u) == git.NormalizeURL(g.RepoURL))
	}
	return same && p.touches(g.Revision)
}
