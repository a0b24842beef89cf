package server

import (
	"cmp"
	"context"
	"fmt"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
)

// Applications outside the control namespace are served as Argo CD's API
// server serves them: only from the namespaces it is started with
// (--application-namespaces, argocd-cmd-params-cm application.namespaces),
// and only when the Application's project lists the namespace in its
// sourceNamespaces. Anything else is what the controller never reconciles,
// and the API shows and changes nothing of it.

// namespaceEnabled reports whether the API serves Applications of ns.
func (s *Server) namespaceEnabled(ns string) bool {
	return ns == s.opts.Namespace || project.MatchesAny(s.opts.ApplicationNamespaces, ns, false)
}

// namespaceNotPermitted is Argo CD's error for a namespace not enabled.
func namespaceNotPermitted(ns string) string {
	return fmt.Sprintf("namespace '%s' is not permitted", ns)
}

// appNotAllowedInProject is Argo CD's deliberately vague error for an
// Application whose project is missing or does not accept its namespace.
func appNotAllowedInProject(app *v1alpha1.Application) string {
	return fmt.Sprintf("app is not allowed in project %q, or the project does not exist", app.Spec.Project)
}

// projectAcceptsNamespace reports whether proj accepts Applications of
// app's namespace: the control namespace always, another one when listed
// in the project's sourceNamespaces.
func (s *Server) projectAcceptsNamespace(proj *v1alpha1.AppProject, app *v1alpha1.Application) bool {
	return app.Namespace == s.opts.Namespace || project.MatchesAny(proj.Spec.SourceNamespaces, app.Namespace, false)
}

// appNamespaceAllowed reports whether app may be served: its namespace
// enabled and accepted by its project (read from the cache).
func (s *Server) appNamespaceAllowed(ctx context.Context, app *v1alpha1.Application) bool {
	if app.Namespace == s.opts.Namespace {
		return true
	}
	if !s.namespaceEnabled(app.Namespace) {
		return false
	}
	proj, err := project.Load(ctx, s.opts.Client, s.opts.Namespace, cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName))
	return err == nil && s.projectAcceptsNamespace(proj, app)
}
