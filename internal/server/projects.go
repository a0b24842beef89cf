package server

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// projectRoutes registers the project service, with its roles' tokens,
// sync windows, links and events.
func (s *Server) projectRoutes() {
	s.mux.HandleFunc("GET /api/v1/projects", s.api(s.listProjects))
	s.mux.HandleFunc("GET /api/v1/projects/{name}", s.api(s.getProject))
	s.mux.HandleFunc("GET /api/v1/projects/{name}/detailed", s.api(s.getDetailedProject))
	s.mux.HandleFunc("POST /api/v1/projects", s.api(s.createProject))
	s.mux.HandleFunc("DELETE /api/v1/projects/{name}", s.api(s.deleteProject))
	s.mux.HandleFunc("PUT /api/v1/projects/{name}", s.api(s.updateProject))
	s.mux.HandleFunc("POST /api/v1/projects/{name}/roles/{role}/token", s.api(s.createRoleToken))
	s.mux.HandleFunc("DELETE /api/v1/projects/{name}/roles/{role}/token/{iat}", s.api(s.deleteRoleToken))
	s.mux.HandleFunc("GET /api/v1/projects/{name}/syncwindows", s.api(s.projectSyncWindows))
	s.mux.HandleFunc("GET /api/v1/projects/{name}/links", s.api(s.projectLinks))
	s.mux.HandleFunc("GET /api/v1/projects/{name}/globalprojects", s.api(s.globalProjects))
	s.mux.HandleFunc("GET /api/v1/projects/{name}/events", s.api(s.projectEvents))
}

// listProjects answers GET /api/v1/projects with the projects the caller
// may get.
func (s *Server) listProjects(r *http.Request, c *caller) (any, error) {
	var list v1alpha1.AppProjectList
	if err := s.opts.Client.List(r.Context(), &list, client.InNamespace(s.opts.Namespace)); err != nil {
		return nil, err
	}
	out := v1alpha1.AppProjectList{ListMeta: list.ListMeta, Items: []v1alpha1.AppProject{}}
	for _, p := range list.Items {
		if c.can(rbac.ResourceProjects, rbac.ActionGet, p.Name) {
			out.Items = append(out.Items, p)
		}
	}
	return out, nil
}

// getProject answers GET /api/v1/projects/{name}.
func (s *Server) getProject(r *http.Request, c *caller) (any, error) {
	return s.loadProject(r, c)
}

// loadProject reads the project the path names for a caller who may get
// it.
func (s *Server) loadProject(r *http.Request, c *caller) (*v1alpha1.AppProject, error) {
	name := r.PathValue("name")
	if err := c.may(rbac.ResourceProjects, rbac.ActionGet, name); err != nil {
		return nil, err
	}
	p := &v1alpha1.AppProject{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, p); err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	return p, nil
}

// createProject answers POST /api/v1/projects with {"project": {...},
// "upsert": bool}, as Argo CD's API takes it.
func (s *Server) createProject(r *http.Request, c *caller) (any, error) {
	var req struct {
		Project v1alpha1.AppProject `json:"project"`
		Upsert  bool                `json:"upsert"`
	}
	if err := decode(r, &req, "project", false); err != nil {
		return nil, err
	}
	p := &req.Project
	if p.Name == "" {
		return nil, badRequest("project name is required")
	}
	if !c.can(rbac.ResourceProjects, rbac.ActionCreate, p.Name) {
		return nil, c.forbidden(rbac.ResourceProjects, rbac.ActionCreate, p.Name)
	}
	if err := validateRoles(p); err != nil {
		return nil, badRequest(err.Error())
	}
	p.Namespace, p.ResourceVersion, p.UID = s.opts.Namespace, "", ""
	reason, action := reasonCreated, "created project"
	err := s.opts.Client.Create(r.Context(), p)
	if apierrors.IsAlreadyExists(err) && req.Upsert {
		reason, action = reasonUpdated, "updated project"
		if !c.can(rbac.ResourceProjects, rbac.ActionUpdate, p.Name) {
			return nil, c.forbidden(rbac.ResourceProjects, rbac.ActionUpdate, p.Name)
		}
		existing := &v1alpha1.AppProject{}
		if err = s.opts.Client.Get(r.Context(), client.ObjectKeyFromObject(p), existing); err == nil {
			existing.Spec = p.Spec
			err = s.opts.Client.Update(r.Context(), existing)
			p = existing
		}
	}
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", p.Name, err)
	}
	s.audit(r.Context(), c, p, reason, action)
	return p, nil
}

// deleteProject answers DELETE /api/v1/projects/{name}; a project that
// Applications still use is not deleted (400), as in Argo CD.
func (s *Server) deleteProject(r *http.Request, c *caller) (any, error) {
	name := r.PathValue("name")
	if !c.can(rbac.ResourceProjects, rbac.ActionDelete, name) {
		return nil, c.forbidden(rbac.ResourceProjects, rbac.ActionDelete, name)
	}
	var apps v1alpha1.ApplicationList
	if err := s.opts.Client.List(r.Context(), &apps); err != nil {
		return nil, err
	}
	if n := countIn(apps.Items, name); n > 0 {
		return nil, badRequest(fmt.Sprintf("project is referenced by %d applications", n))
	}
	p := &v1alpha1.AppProject{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, p); err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	if err := s.opts.Client.Delete(r.Context(), p); err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	s.audit(r.Context(), c, p, reasonDeleted, "deleted project")
	return map[string]string{}, nil
}

func countIn(apps []v1alpha1.Application, project string) int {
	n := 0
	for _, a := range apps {
		if a.Spec.Project == project {
			n++
		}
	}
	return n
}

// getDetailedProject answers GET /api/v1/projects/{name}/detailed: the
// project with the repositories and clusters scoped to it (credentials
// left out) and its global projects, as Argo CD's API shows them.
func (s *Server) getDetailedProject(r *http.Request, c *caller) (any, error) {
	p, err := s.loadProject(r, c)
	if err != nil {
		return nil, err
	}
	name := p.Name
	repos, err := settings.RepositorySecrets(r.Context(), s.opts.Client, s.opts.Namespace, v1alpha1.SecretTypeRepository)
	if err != nil {
		return nil, err
	}
	specs, _, err := s.clusters(r)
	if err != nil {
		return nil, err
	}
	out := struct {
		Project        *v1alpha1.AppProject  `json:"project"`
		GlobalProjects []v1alpha1.AppProject `json:"globalProjects"`
		Repositories   []settings.Repository `json:"repositories"`
		Clusters       []cluster.Spec        `json:"clusters"`
	}{Project: p, GlobalProjects: []v1alpha1.AppProject{}, Repositories: []settings.Repository{}, Clusters: []cluster.Spec{}}
	globals, err := project.Globals(r.Context(), s.opts.Client, p)
	if err != nil {
		return nil, err
	}
	for _, g := range globals {
		out.GlobalProjects = append(out.GlobalProjects, *g)
	}
	for _, repo := range repos {
		if repo.Project == name {
			out.Repositories = append(out.Repositories, repo.Redacted())
		}
	}
	for _, spec := range specs {
		if spec.Project == name {
			out.Clusters = append(out.Clusters, spec.Redacted())
		}
	}
	return out, nil
}

// globalProjects answers GET /api/v1/projects/{name}/globalprojects: the
// global projects whose settings the project gets (argocd-cm
// globalProjects).
func (s *Server) globalProjects(r *http.Request, c *caller) (any, error) {
	p, err := s.loadProject(r, c)
	if err != nil {
		return nil, err
	}
	globals, err := project.Globals(r.Context(), s.opts.Client, p)
	if err != nil {
		return nil, err
	}
	return struct {
		Items []*v1alpha1.AppProject `json:"items,omitempty"`
	}{globals}, nil
}

// projectEvents answers GET /api/v1/projects/{name}/events: the
// Kubernetes Events about the project.
func (s *Server) projectEvents(r *http.Request, c *caller) (any, error) {
	p, err := s.loadProject(r, c)
	if err != nil {
		return nil, err
	}
	list := &corev1.EventList{}
	err = s.opts.Client.List(r.Context(), list, client.InNamespace(p.Namespace),
		client.MatchingFields{"involvedObject.name": p.Name, "involvedObject.uid": string(p.UID)})
	return list, err
}
