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
// by default (absent or empty) the control namespace; "" after answering
// a bad name.
func (s *Server) appSetNamespace(w http.ResponseWriter, r *http.Request) string {
	ns := r.URL.Query().Get("appsetNamespace")
	if ns == "" {
		return s.opts.Namespace
	}
	if !validName(w, "namespace", ns) {
		return ""
	}
	return ns
}

// listApplicationSets answers GET /api/v1/applicationsets with the
// ApplicationSets the caller may get, filtered by projects and selector.
func (s *Server) listApplicationSets(w http.ResponseWriter, r *http.Request, c *caller) {
	ns := s.appSetNamespace(w, r)
	if ns == "" {
		return
	}
	q := r.URL.Query()
	opts := []client.ListOption{client.InNamespace(ns)}
	if sel := q.Get("selector"); sel != "" {
		parsed, err := labels.Parse(sel)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid selector %q: %v", sel, err))
			return
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: parsed})
	}
	var list v1alpha1.ApplicationSetList
	if err := s.opts.Client.List(r.Context(), &list, opts...); err != nil {
		s.reply(w, nil, err)
		return
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
	writeJSON(w, http.StatusOK, out)
}

// loadAppSet reads the named ApplicationSet for a caller who may do action
// on it, or answers the error and returns nil. As for Applications, a
// missing one reads as refused to a caller who could not see it anyway.
func (s *Server) loadAppSet(w http.ResponseWriter, r *http.Request, c *caller, action rbac.Action) *v1alpha1.ApplicationSet {
	ns := s.appSetNamespace(w, r)
	if ns == "" {
		return nil
	}
	name := r.PathValue("name")
	if !validName(w, "applicationset", name) {
		return nil
	}
	as := &v1alpha1.ApplicationSet{}
	err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, as)
	if apierrors.IsNotFound(err) {
		if c.can(rbac.ResourceApplicationSets, action, "*/"+name) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("applicationset %s not found in namespace %s", name, ns))
		} else {
			c.denied(w, rbac.ResourceApplicationSets, action, "*/"+name)
		}
		return nil
	}
	if err != nil {
		s.reply(w, nil, err)
		return nil
	}
	if object := s.appSetObject(as); !c.can(rbac.ResourceApplicationSets, action, object) {
		c.denied(w, rbac.ResourceApplicationSets, action, object)
		return nil
	}
	return as
}

// getApplicationSet answers GET /api/v1/applicationsets/{name}.
func (s *Server) getApplicationSet(w http.ResponseWriter, r *http.Request, c *caller) {
	if as := s.loadAppSet(w, r, c, rbac.ActionGet); as != nil {
		writeJSON(w, http.StatusOK, as)
	}
}

// createApplicationSet answers POST /api/v1/applicationsets?upsert=&dryRun=
// with the ApplicationSet as the body, as Argo CD's API takes it: an
// existing one with another spec needs upsert; dryRun writes nothing.
func (s *Server) createApplicationSet(w http.ResponseWriter, r *http.Request, c *caller) {
	as := &v1alpha1.ApplicationSet{}
	if !decodeBody(w, r, as, "applicationset", false) {
		return
	}
	if as.Name == "" {
		writeError(w, http.StatusBadRequest, "applicationset name is required")
		return
	}
	if !validName(w, "applicationset", as.Name) {
		return
	}
	if as.Namespace == "" {
		as.Namespace = s.opts.Namespace
	}
	if !validName(w, "namespace", as.Namespace) {
		return
	}
	if strings.Contains(as.Spec.Template.Spec.Project, "{{") {
		// Its RBAC object would be the caller's choice: refused, as Argo CD does.
		writeError(w, http.StatusBadRequest, "the API does not support creating ApplicationSets with templated `project` fields")
		return
	}
	object := s.appSetObject(as)
	if !c.can(rbac.ResourceApplicationSets, rbac.ActionCreate, object) {
		c.denied(w, rbac.ResourceApplicationSets, rbac.ActionCreate, object)
		return
	}
	if len(as.Spec.Generators) == 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("ApplicationSet/%s/%s has no generators", as.Namespace, as.Name))
		return
	}
	proj := &v1alpha1.AppProject{}
	if p := as.Spec.Template.Spec.Project; p != "" {
		if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: p}, proj); err != nil {
			writeError(w, statusOf(err), fmt.Sprintf("error getting ApplicationSet's project %q: %v", p, err))
			return
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
				writeError(w, statusOf(err), fmt.Sprintf("applicationset %s: %v", as.Name, err))
				return
			}
			s.audit(r.Context(), c, as, reasonCreated, "created applicationset")
		}
		writeJSON(w, http.StatusOK, as)
		return
	case err != nil:
		s.reply(w, nil, err)
		return
	}
	if equality.Semantic.DeepEqual(existing.Spec, as.Spec) {
		writeJSON(w, http.StatusOK, existing)
		return
	}
	if !upsert {
		writeError(w, http.StatusBadRequest, "existing ApplicationSet spec is different, use upsert flag to force update")
		return
	}
	if obj := s.appSetObject(existing); !c.can(rbac.ResourceApplicationSets, rbac.ActionUpdate, obj) {
		c.denied(w, rbac.ResourceApplicationSets, rbac.ActionUpdate, obj)
		return
	}
	existing.Spec, existing.Labels, existing.Annotations, existing.Finalizers = as.Spec, as.Labels, as.Annotations, as.Finalizers
	if !dryRun {
		if err := s.opts.Client.Update(r.Context(), existing); err != nil {
			writeError(w, statusOf(err), fmt.Sprintf("applicationset %s: %v", as.Name, err))
			return
		}
		s.audit(r.Context(), c, existing, reasonUpdated, "updated applicationset")
	}
	writeJSON(w, http.StatusOK, existing)
}

// deleteApplicationSet answers DELETE /api/v1/applicationsets/{name}; its
// Applications go with it (owner references).
func (s *Server) deleteApplicationSet(w http.ResponseWriter, r *http.Request, c *caller) {
	as := s.loadAppSet(w, r, c, rbac.ActionDelete)
	if as == nil {
		return
	}
	if err := s.opts.Client.Delete(r.Context(), as); err != nil && !apierrors.IsNotFound(err) {
		writeError(w, statusOf(err), fmt.Sprintf("applicationset %s: %v", as.Name, err))
		return
	}
	s.audit(r.Context(), c, as, reasonDeleted, "deleted applicationset")
	writeJSON(w, http.StatusOK, map[string]string{})
}
