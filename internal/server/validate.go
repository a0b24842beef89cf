package server

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// validateApplication checks an Application the API is asked to create or
// change, as Argo CD's API server does before storing it: its sources are
// complete and well formed, its destination is a registered cluster, and
// its project permits both. The refusal is Argo CD's: "application spec
// for <name> is invalid: InvalidSpecError: <why>;InvalidSpecError: …".
func (s *Server) validateApplication(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject) error {
	var problems []string
	problems = append(problems, sourceProblems(app.Spec)...)
	dest := project.Destination{Server: app.Spec.Destination.Server, Name: app.Spec.Destination.Name, Namespace: app.Spec.Destination.Namespace}
	c, err := s.state.Clusters.Get(ctx, app.Spec.Destination)
	var bad *cluster.DestinationError
	switch {
	case errors.As(err, &bad):
		problems = append(problems, bad.Message)
	case err != nil:
		return err
	default:
		dest.Server, dest.Name = c.Server, c.Name
	}
	if len(problems) == 0 {
		if err := project.CheckApplication(proj, app, s.opts.Namespace, dest); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) == 0 {
		return nil
	}
	for i, p := range problems {
		problems[i] = string(v1alpha1.ApplicationConditionInvalidSpecError) + ": " + p
	}
	return badRequest(fmt.Sprintf("application spec for %s is invalid: %s", app.Name, strings.Join(problems, ";")))
}

// sourceProblems are what is wrong with an Application's sources on their
// own: missing fields, repository URLs and revisions that could never be
// fetched, and paths outside their repository.
func sourceProblems(spec v1alpha1.ApplicationSpec) []string {
	srcs := spec.GetSources()
	if len(srcs) == 0 {
		return []string{"spec.source.repoURL and either spec.source.path or spec.source.chart are required"}
	}
	var out []string
	for i, src := range srcs {
		field := "spec.source"
		if len(spec.Sources) > 0 {
			field = fmt.Sprintf("spec.sources[%d]", i)
		}
		refOnly := src.Ref != "" && src.Path == "" && src.Chart == ""
		switch {
		case src.RepoURL == "" || (src.Path == "" && src.Chart == "" && !refOnly && len(spec.Sources) == 0):
			out = append(out, fmt.Sprintf("%s.repoURL and either %s.path or %s.chart are required", field, field, field))
			continue
		case src.Chart != "" && src.TargetRevision == "":
			out = append(out, fmt.Sprintf("%s.targetRevision is required if the manifest source is a helm chart", field))
			continue
		}
		if src.Chart != "" {
			if err := chartrepo.Validate(src.RepoURL, src.Chart); err != nil {
				out = append(out, err.Error())
			}
			continue
		}
		if ocisource.IsSource(src) {
			if err := ocisource.Validate(src.RepoURL, src.TargetRevision); err != nil {
				out = append(out, err.Error())
			}
		} else {
			if err := git.ValidateURL(src.RepoURL); err != nil {
				out = append(out, err.Error())
			}
			if err := git.ValidateRevision(src.TargetRevision); err != nil {
				out = append(out, fmt.Sprintf("%s.targetRevision: %v", field, err))
			}
		}
		if outside(src.Path) {
			out = append(out, fmt.Sprintf("%s.path %q is outside the repository", field, src.Path))
		}
	}
	return out
}

// outside reports whether a source path leaves its repository: absolute,
// or climbing above the root.
func outside(p string) bool {
	if p == "" {
		return false
	}
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) {
		return true
	}
	clean := path.Clean(p)
	return clean == ".." || strings.HasPrefix(clean, "../")
}

// checkName refuses (400) a name no Kubernetes object can have (one
// holding "/" or "..", say), so that it never reaches a request to the
// Kubernetes API.
func checkName(kind, name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return badRequest(fmt.Sprintf("invalid %s name %q: %s", kind, safetext.Truncate(name, 100), strings.Join(errs, "; ")))
	}
	return nil
}

// namedKind is the kind of Kubernetes object whose name the {name} of an
// API path is, or "" when it names something else (an account).
func namedKind(urlPath string) string {
	for prefix, kind := range map[string]string{"/api/v1/applications/": "application", "/api/v1/applicationsets/": "applicationset", "/api/v1/projects/": "project"} {
		if strings.HasPrefix(urlPath, prefix) {
			return kind
		}
	}
	return ""
}
