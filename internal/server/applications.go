package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/session"
)

// caller is an authenticated request's identity and the policy to judge
// it by.
type caller struct {
	claims   *session.Claims
	subjects []string
	enforcer *rbac.Enforcer
}

func (c *caller) can(resource, action, object string) bool {
	return c.enforcer.Enforce(c.subjects, resource, action, object)
}

// denied writes Argo CD's 403 for a refused action.
func (c *caller) denied(w http.ResponseWriter, resource, action, object string) {
	writeError(w, http.StatusForbidden, fmt.Sprintf("permission denied: %s, %s, %s, sub: %s", resource, action, object, c.claims.Subject))
}

// authorized runs h for authenticated callers with the current policy,
// and answers 401 for the others.
func (s *Server) authorized(h func(http.ResponseWriter, *http.Request, *caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		claims, err := s.authenticate(r)
		if err != nil {
			writeError(w, http.StatusUnauthorized, "invalid session: "+err.Error())
			return
		}
		p, err := rbac.Load(r.Context(), s.opts.Client, s.opts.Namespace)
		if err != nil {
			s.internal(w, err)
			return
		}
		enf, err := rbac.New(p)
		if err != nil {
			s.internal(w, err)
			return
		}
		h(w, r, &caller{claims: claims, subjects: enf.Subjects(map[string]any{"sub": claims.Subject}), enforcer: enf})
	}
}

// appObject is an Application's RBAC object: <project>/<name>, or
// <project>/<namespace>/<name> outside the control namespace.
func (s *Server) appObject(app *v1alpha1.Application) string {
	project := app.Spec.Project
	if project == "" {
		project = v1alpha1.DefaultAppProjectName
	}
	if app.Namespace != s.opts.Namespace {
		return project + "/" + app.Namespace + "/" + app.Name
	}
	return project + "/" + app.Name
}

// listApplications answers GET /api/v1/applications with the Applications
// the caller may get, filtered by the projects, selector and name query
// parameters as Argo CD's API does.
func (s *Server) listApplications(w http.ResponseWriter, r *http.Request, c *caller) {
	q := r.URL.Query()
	opts := []client.ListOption{client.InNamespace(s.opts.Namespace)}
	if ns := q.Get("appNamespace"); ns != "" {
		opts[0] = client.InNamespace(ns)
	}
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid selector %q: %v", sel, err))
			return
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: parsed})
	}
	var list v1alpha1.ApplicationList
	if err := s.opts.Client.List(r.Context(), &list, opts...); err != nil {
		s.internal(w, err)
		return
	}
	projects := append(q["projects"], q["project"]...)
	out := v1alpha1.ApplicationList{ListMeta: list.ListMeta, Items: []v1alpha1.Application{}}
	for _, app := range list.Items {
		if name := q.Get("name"); name != "" && app.Name != name {
			continue
		}
		if len(projects) > 0 && !slices.Contains(projects, app.Spec.Project) {
			continue
		}
		if c.can("applications", "get", s.appObject(&app)) {
			out.Items = append(out.Items, app)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// getApplication answers GET /api/v1/applications/{name}.
func (s *Server) getApplication(w http.ResponseWriter, r *http.Request, c *caller) {
	ns := r.URL.Query().Get("appNamespace")
	if ns == "" {
		ns = s.opts.Namespace
	}
	app := &v1alpha1.Application{}
	err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: r.PathValue("name")}, app)
	if apierrors.IsNotFound(err) {
		// Only a caller who may read this name in every project learns
		// that it does not exist; to others it reads as refused.
		if c.can("applications", "get", "*/"+r.PathValue("name")) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("application %s not found in namespace %s", r.PathValue("name"), ns))
			return
		}
		c.denied(w, "applications", "get", "*/"+r.PathValue("name"))
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	if object := s.appObject(app); !c.can("applications", "get", object) {
		c.denied(w, "applications", "get", object)
		return
	}
	writeJSON(w, http.StatusOK, app)
}

var errNoSession = errors.New("no session information")
