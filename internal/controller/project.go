package controller

import (
	"context"
	"fmt"

	"github.com/gobwas/glob"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// checkProject refuses an Application its AppProject does not allow:
// a source repository outside sourceRepos, or a destination cluster
// (matched by server or name, whichever the project lists) and namespace
// outside destinations.
func (r *reconciler) checkProject(ctx context.Context, app *v1alpha1.Application, dst *cluster.Cluster) error {
	proj := &v1alpha1.AppProject{}
	name := app.Spec.Project
	if name == "" {
		name = v1alpha1.DefaultAppProjectName
	}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: name}, proj); err != nil {
		return fmt.Errorf("application references project %s which does not exist", name)
	}
	for _, src := range sources(app) {
		if !matchesAny(proj.Spec.SourceRepos, git.NormalizeURL(src.RepoURL), true) {
			return fmt.Errorf("application repo %s is not permitted in project '%s'", git.RedactURL(src.RepoURL), name)
		}
	}
	d := app.Spec.Destination
	for _, allowed := range proj.Spec.Destinations {
		serverOK := (allowed.Server == "" && allowed.Name == "") ||
			(allowed.Server != "" && globMatch(allowed.Server, dst.Server)) ||
			(allowed.Name != "" && globMatch(allowed.Name, dst.Name))
		if serverOK && globMatch(orStar(allowed.Namespace), d.Namespace) {
			return nil
		}
	}
	return fmt.Errorf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'",
		firstNonEmpty(d.Server, d.Name), d.Namespace, name)
}

func matchesAny(patterns []string, value string, normalize bool) bool {
	for _, p := range patterns {
		if normalize && p != "*" {
			p = git.NormalizeURL(p)
		}
		if globMatch(p, value) {
			return true
		}
	}
	return false
}

func globMatch(pattern, value string) bool {
	if pattern == value || pattern == "*" {
		return true
	}
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		return false
	}
	return g.Match(value)
}

func orStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
