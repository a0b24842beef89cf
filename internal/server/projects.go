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

// listProjects answers GET /api/v1/projects with the projects the caller
// may get.
func (s *Server) listProjects(w http.ResponseWriter, r *http.Request, c *caller) {
	var list v1alpha1.AppProjectList
	if err := s.opts.Client.List(r.Context(), &list, client.InNamespace(s.opts.Namespace)); err != nil {
		s.reply(w, nil, err)
		return
	}
	out := v1alpha1.AppProjectList{ListMeta: list.ListMeta, Items: []v1alpha1.AppProject{}}
	for _, p := range list.Items {
		if c.can(rbac.ResourceProjects, rbac.ActionGet, p.Name) {
			out.Items = append(out.Items, p)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// getProject answers GET /api/v1/projects/{name}.
func (s *Server) getProject(w http.ResponseWriter, r *http.Request, c *caller) {
	if p := s.loadProject(w, r, c); p != nil {
		writeJSON(w, http.StatusOK, p)
	}
}

// loadProject reads the project the path names for a caller who may get
// it, or answers the error and returns nil.
func (s *Server) loadProject(w http.ResponseWriter, r *http.Request, c *caller) *v1alpha1.AppProject {
	name := r.PathValue("name")
	if !c.can(rbac.ResourceProjects, rbac.ActionGet, name) {
		c.denied(w, rbac.ResourceProjects, rbac.ActionGet, name)
		return nil
	}
	p := &v1alpha1.AppProject{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, p); err != nil {
		writeError(w, statusOf(err), fmt.Sprintf("project %s: %v", name, err))
		return nil
	}
	return p
}

// createProject answers POST /api/v1/projects with {"project": {...},
// "upsert": bool}, as Argo CD's API takes it.
func (s *Server) createProject(w http.ResponseWriter, r *http.Request, c *caller) {
	var req struct {
		Project v1alpha1.AppProject `json:"project"`
		Upsert  bool                `json:"upsert"`
	}
	if !decodeBody(w, r, &req, "project", false) {
		return
	}
	p := &req.Project
	if p.Name == "" {
		writeError(w, http.StatusBadRequest, "project name is required")
		return
	}
	if !c.can(rbac.ResourceProjects, rbac.ActionCreate, p.Name) {
		c.denied(w, rbac.ResourceProjects, rbac.ActionCreate, p.Name)
		return
	}
	if err := validateRoles(p); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	p.Namespace, p.ResourceVersion, p.UID = s.opts.Namespace, "", ""
	reason, action := reasonCreated, "created project"
	err := s.opts.Client.Create(r.Context(), p)
	if apierrors.IsAlreadyExists(err) && req.Upsert {
		reason, action = reasonUpdated, "updated project"
		if !c.can(rbac.ResourceProjects, rbac.ActionUpdate, p.Name) {
			c.denied(w, rbac.ResourceProjects, rbac.ActionUpdate, p.Name)
			return
		}
		existing := &v1alpha1.AppProject{}
		if err = s.opts.Client.Get(r.Context(), client.ObjectKeyFromObject(p), existing); err == nil {
			existing.Spec = p.Spec
			err = s.opts.Client.Update(r.Context(), existing)
			p = existing
		}
	}
	if err != nil {
		writeError(w, statusOf(err), fmt.Sprintf("project %s: %v", p.Name, err))
		return
	}
	s.audit(r.Context(), c, p, reason, action)
	writeJSON(w, http.StatusOK, p)
}

// deleteProject answers DELETE /api/v1/projects/{name}; a project that
// Applications still use is not deleted (400), as in Argo CD.
func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, c *caller) {
	name := r.PathValue("name")
	if !c.can(rbac.ResourceProjects, rbac.ActionDelete, name) {
		c.denied(w, rbac.ResourceProjects, rbac.ActionDelete, name)
		return
	}
	var apps v1alpha1.ApplicationList
	if err := s.opts.Client.List(r.Context(), &apps); err != nil {
		s.reply(w, nil, err)
		return
	}
	if n := countIn(apps.Items, name); n > 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("project is referenced by %d applications", n))
		return
	}
	p := &v1alpha1.AppProject{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, p); err != nil {
		writeError(w, statusOf(err), fmt.Sprintf("project %s: %v", name, err))
		return
	}
	if err := s.opts.Client.Delete(r.Context(), p); err != nil {
		writeError(w, statusOf(err), fmt.Sprintf("project %s: %v", name, err))
		return
	}
	s.audit(r.Context(), c, p, reasonDeleted, "deleted project")
	writeJSON(w, http.StatusOK, map[string]string{})
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
func (s *Server) getDetailedProject(w http.ResponseWriter, r *http.Request, c *caller) {
	p := s.loadProject(w, r, c)
	if p == nil {
		return
	}
	name := p.Name
	repos, err := settings.RepositorySecrets(r.Context(), s.opts.Client, s.opts.Namespace, false)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	specs, _, err := s.clusters(r)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	out := struct {
		Project        *v1alpha1.AppProject  `json:"project"`
		GlobalProjects []v1alpha1.AppProject `json:"globalProjects"`
		Repositories   []settings.Repository `json:"repositories"`
		Clusters       []cluster.Spec        `json:"clusters"`
	}{Project: p, GlobalProjects: []v1alpha1.AppProject{}, Repositories: []settings.Repository{}, Clusters: []cluster.Spec{}}
	globals, err := project.Globals(r.Context(), s.opts.Client, p)
	if err != nil {
		s.reply(w, nil, err)
		return
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
	writeJSON(w, http.StatusOK, out)
}

// globalProjects answers GET /api/v1/projects/{name}/globalprojects: the
// global projects whose settings the project gets (argocd-cm
// globalProjects).
func (s *Server) globalProjects(w http.ResponseWriter, r *http.Request, c *caller) {
	p := s.loadProject(w, r, c)
	if p == nil {
		return
	}
	globals, err := project.Globals(r.Context(), s.opts.Client, p)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Items []*v1alpha1.AppProject `json:"items,omitempty"`
	}{globals})
}

// projectEvents answers GET /api/v1/projects/{name}/events: the
// Kubernetes Events about the project.
func (s *Server) projectEvents(w http.ResponseWriter, r *http.Request, c *caller) {
	p := s.loadProject(w, r, c)
	if p == nil {
		return
	}
	list := &corev1.EventList{}
	err := s.opts.Client.List(r.Context(), list, client.InNamespace(p.Namespace),
		client.MatchingFields{"involvedObject.name": p.Name, "involvedObject.uid": string(p.UID)})
	s.reply(w, list, err)
}
