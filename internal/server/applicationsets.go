package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// applicationSetRoutes registers the ApplicationSet service.
func (s *Server) applicationSetRoutes() {
	s.mux.HandleFunc("GET /api/v1/applicationsets", s.api(s.listApplicationSets))
	s.mux.HandleFunc("POST /api/v1/applicationsets", s.api(s.createApplicationSet))
	s.mux.HandleFunc("GET /api/v1/applicationsets/{name}", s.api(s.getApplicationSet))
	s.mux.HandleFunc("DELETE /api/v1/applicationsets/{name}", s.api(s.deleteApplicationSet))
	s.mux.HandleFunc("POST /api/v1/applicationsets/generate", s.api(s.generateApplicationSet))
	s.mux.HandleFunc("GET /api/v1/applicationsets/{name}/resource-tree", s.api(s.applicationSetTree))
	s.mux.HandleFunc("GET /api/v1/applicationsets/{name}/events", s.api(s.applicationSetEvents))
	s.mux.HandleFunc("GET /api/v1/stream/applicationsets", s.streaming(s.streamApplicationSets))
}

// appSetObject is an ApplicationSet's RBAC object, as for the
// Applications it makes: <project>/<name>, or <project>/<namespace>/<name>
// outside the control namespace, the project being the template's.
func (s *Server) appSetObject(as *v1alpha1.ApplicationSet) string {
	return s.appObject(&v1alpha1.Application{
		ObjectMeta: as.ObjectMeta,
		Spec:       v1alpha1.ApplicationSpec{Project: as.Spec.Template.Spec.Project},
	})
}

// appSetNamespace is the namespace a request names (appsetNamespace),
// by default (absent or empty) the control namespace.
func (s *Server) appSetNamespace(r *http.Request) (string, error) {
	ns := r.URL.Query().Get("appsetNamespace")
	if ns == "" {
		return s.opts.Namespace, nil
	}
	return ns, checkName("namespace", ns)
}

// listApplicationSets answers GET /api/v1/applicationsets with the
// ApplicationSets the caller may get, filtered by projects and selector.
func (s *Server) listApplicationSets(r *http.Request, c *caller) (any, error) {
	ns, err := s.appSetNamespace(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	opts := []client.ListOption{client.InNamespace(ns)}
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("invalid selector %q: %v", sel, err))
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: parsed})
	}
	var list v1alpha1.ApplicationSetList
	if err := s.opts.Client.List(r.Context(), &list, opts...); err != nil {
		return nil, err
	}
	projects := q["projects"]
	out := v1alpha1.ApplicationSetList{ListMeta: list.ListMeta, Items: []v1alpha1.ApplicationSet{}}
	for _, as := range list.Items {
		if len(projects) > 0 && !slices.Contains(projects, as.Spec.Template.Spec.Project) {
			continue
		}
		if c.can(rbac.ResourceApplicationSets, rbac.ActionGet, s.appSetObject(&as)) {
			out.Items = append(out.Items, as)
		}
	}
	return out, nil
}

// loadAppSet reads the named ApplicationSet for a caller who may do action
// on it. As for Applications, a missing one reads as refused to a caller
// who could not see it anyway.
func (s *Server) loadAppSet(r *http.Request, c *caller, action rbac.Action) (*v1alpha1.ApplicationSet, error) {
	ns, err := s.appSetNamespace(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if err := checkName("applicationset", name); err != nil {
		return nil, err
	}
	as := &v1alpha1.ApplicationSet{}
	err = s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, as)
	if apierrors.IsNotFound(err) {
		if c.can(rbac.ResourceApplicationSets, action, "*/"+name) {
			return nil, notFound(fmt.Sprintf("applicationset %s not found in namespace %s", name, ns))
		}
		return nil, c.forbidden(rbac.ResourceApplicationSets, action, "*/"+name)
	}
	if err != nil {
		return nil, err
	}
	if err := c.may(rbac.ResourceApplicationSets, action, s.appSetObject(as)); err != nil {
		return nil, err
	}
	return as, nil
}

// getApplicationSet answers GET /api/v1/applicationsets/{name}.
func (s *Server) getApplicationSet(r *http.Request, c *caller) (any, error) {
	return s.loadAppSet(r, c, rbac.ActionGet)
}

// createApplicationSet answers POST /api/v1/applicationsets?upsert=&dryRun=
// with the ApplicationSet as the body, as Argo CD's API takes it: an
// existing one with another spec needs upsert; dryRun writes nothing.
func (s *Server) createApplicationSet(r *http.Request, c *caller) (any, error) {
	as := &v1alpha1.ApplicationSet{}
	if err := decode(r, as, "applicationset", false); err != nil {
		return nil, err
	}
	if as.Name == "" {
		return nil, badRequest("applicationset name is required")
	}
	if err := checkName("applicationset", as.Name); err != nil {
		return nil, err
	}
	if err := s.servedAppSetNamespace(as); err != nil {
		return nil, err
	}
	if strings.Contains(as.Spec.Template.Spec.Project, "{{") {
		// Its RBAC object would be the caller's choice: refused, as Argo CD does.
		return nil, badRequest("the API does not support creating ApplicationSets with templated `project` fields")
	}
	object := s.appSetObject(as)
	if !c.can(rbac.ResourceApplicationSets, rbac.ActionCreate, object) {
		return nil, c.forbidden(rbac.ResourceApplicationSets, rbac.ActionCreate, object)
	}
	if len(as.Spec.Generators) == 0 {
		return nil, badRequest(fmt.Sprintf("ApplicationSet/%s/%s has no generators", as.Namespace, as.Name))
	}
	proj := &v1alpha1.AppProject{}
	if p := as.Spec.Template.Spec.Project; p != "" {
		if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: p}, proj); err != nil {
			return nil, fmt.Errorf("error getting ApplicationSet's project %q: %w", p, err)
		}
	}
	q := r.URL.Query()
	upsert, dryRun := q.Get("upsert") == "true", q.Get("dryRun") == "true"
	existing := &v1alpha1.ApplicationSet{}
	err := s.opts.Client.Get(r.Context(), client.ObjectKeyFromObject(as), existing)
	switch {
	case apierrors.IsNotFound(err):
		as.ResourceVersion, as.UID, as.Status = "", "", v1alpha1.ApplicationSetStatus{}
		if !dryRun {
			if err := s.opts.Client.Create(r.Context(), as); err != nil {
				return nil, fmt.Errorf("applicationset %s: %w", as.Name, err)
			}
			s.audit(r.Context(), c, as, reasonCreated, "created applicationset")
		}
		return as, nil
	case err != nil:
		return nil, err
	}
	if equality.Semantic.DeepEqual(existing.Spec, as.Spec) {
		return existing, nil
	}
	if !upsert {
		return nil, badRequest("existing ApplicationSet spec is different, use upsert flag to force update")
	}
	if obj := s.appSetObject(existing); !c.can(rbac.ResourceApplicationSets, rbac.ActionUpdate, obj) {
		return nil, c.forbidden(rbac.ResourceApplicationSets, rbac.ActionUpdate, obj)
	}
	existing.Spec, existing.Labels, existing.Annotations, existing.Finalizers = as.Spec, as.Labels, as.Annotations, as.Finalizers
	if !dryRun {
		if err := s.opts.Client.Update(r.Context(), existing); err != nil {
			return nil, fmt.Errorf("applicationset %s: %w", as.Name, err)
		}
		s.audit(r.Context(), c, existing, reasonUpdated, "updated applicationset")
	}
	return existing, nil
}

// deleteApplicationSet answers DELETE /api/v1/applicationsets/{name}; its
// Applications go with it (owner references).
func (s *Server) deleteApplicationSet(r *http.Request, c *caller) (any, error) {
	as, err := s.loadAppSet(r, c, rbac.ActionDelete)
	if err != nil {
		return nil, err
	}
	if err := s.opts.Client.Delete(r.Context(), as); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("applicationset %s: %w", as.Name, err)
	}
	s.audit(r.Context(), c, as, reasonDeleted, "deleted applicationset")
	return map[string]string{}, nil
}
