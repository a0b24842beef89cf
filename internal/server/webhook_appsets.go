package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// refreshAppSets marks the ApplicationSets of the control namespace whose
// git generators (at any depth of matrix and merge) read the pushed
// repository at the pushed branch, so the ApplicationSet controller runs
// them now instead of at their next period, as Argo CD's API server does.
func (s *Server) refreshAppSets(ctx context.Context, p *push) error {
	var list v1alpha1.ApplicationSetList
	if err := s.opts.Client.List(ctx, &list, client.InNamespace(s.opts.Namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		as := &list.Items[i]
		if !readsPush(as, p) {
			continue
		}
		patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationApplicationSetRefresh + `":"true"}}}`)
		if err := s.opts.Client.Patch(ctx, as, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			return fmt.Errorf("refreshing ApplicationSet/%s/%s: %w", as.Namespace, as.Name, err)
		}
	}
	return nil
}

// readsPush reports whether one of the set's git generators reads the
// pushed repository at the pushed ref (HEAD and an empty revision read
// the default branch).
func readsPush(as *v1alpha1.ApplicationSet, p *push) bool {
	data, err := json.Marshal(as.Spec.Generators)
	if err != nil {
		return false
	}
	var tree any
	if json.Unmarshal(data, &tree) != nil {
		return false
	}
	pushed := strings.TrimPrefix(strings.TrimPrefix(p.ref, "refs/heads/"), "refs/tags/")
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if g, ok := v["git"].(map[string]any); ok {
				repoURL, _ := g["repoURL"].(string)
				rev, _ := g["revision"].(string)
				rev = strings.TrimPrefix(strings.TrimPrefix(rev, "refs/heads/"), "refs/tags/")
				same := false
				for _, u := range p.urls {
					same = same || (u != "" && git.NormalizeURL(u) == git.NormalizeURL(repoURL))
				}
				if same && (rev == pushed || ((rev == "" || rev == "HEAD") && (p.defaultBranch == "" || p.defaultBranch == pushed))) {
					found = true
				}
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(tree)
	return found
}
