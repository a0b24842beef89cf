package server

import (
	"net/http"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/deeplinks"
	"github.com/capstan-cd/capstan/internal/engine/diff"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The deep links of argocd-cm, evaluated for one object: GET
// /api/v1/applications/{name}/links, …/resource/links and
// /api/v1/projects/{name}/links answer {"items": [...]}. A link whose
// condition or template fails is left out and logged.

// applicationLinks answers GET /api/v1/applications/{name}/links; as in
// Argo CD, its query names the app's namespace "namespace".
func (s *Server) applicationLinks(r *http.Request, c *caller) (any, error) {
	withAppNamespace(r, "namespace")
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	data, err := s.appLinkData(r, app)
	if err != nil {
		return nil, err
	}
	return s.links(r, settings.ApplicationLinks, data, app.Name)
}

// resourceLinks answers GET /api/v1/applications/{name}/resource/links for
// an object of the app's tree (Secret values masked), or the app itself.
func (s *Server) resourceLinks(r *http.Request, c *caller) (any, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	ref := refFromQuery(r)
	var obj any
	if ref.Kind == v1alpha1.ApplicationKind && ref.Group == v1alpha1.GroupVersion.Group && ref.Name == app.Name {
		obj = typed(app)
	} else {
		live, err := s.state.Live(r.Context(), app, ref)
		if err != nil {
			return nil, err
		}
		_, masked := diff.MaskSecret(nil, live)
		obj = masked.Object
	}
	data, err := s.appLinkData(r, app)
	if err != nil {
		return nil, err
	}
	if err := data.Set(deeplinks.KeyResource, obj); err != nil {
		return nil, err
	}
	return s.links(r, settings.ResourceLinks, data, ref.Name)
}

// projectLinks answers GET /api/v1/projects/{name}/links.
func (s *Server) projectLinks(r *http.Request, c *caller) (any, error) {
	p, err := s.loadProject(r, c)
	if err != nil {
		return nil, err
	}
	data := deeplinks.Data{}
	if err := data.Set(deeplinks.KeyProject, withoutStatus(p)); err != nil {
		return nil, err
	}
	return s.links(r, settings.ProjectLinks, data, p.Name)
}

// appLinkData is what an app's links see: the Application (as application
// and app), its destination cluster without credentials, and its project
// without tokens.
func (s *Server) appLinkData(r *http.Request, app *v1alpha1.Application) (deeplinks.Data, error) {
	data := deeplinks.Data{}
	if err := data.Set(deeplinks.KeyApplication, typed(app)); err != nil {
		return nil, err
	}
	data[deeplinks.KeyApp] = data[deeplinks.KeyApplication]
	specs, _, err := s.clusters(r)
	if err != nil {
		return nil, err
	}
	if spec := destinationSpec(specs, app.Spec.Destination); spec != nil {
		_ = data.Set(deeplinks.KeyCluster, map[string]any{
			"server": spec.Server, "name": spec.Name, "namespaces": spec.Namespaces, "shard": spec.Shard,
			"project": spec.Project, "labels": spec.Labels, "annotations": spec.Annotations,
		})
	}
	proj, err := s.project(r, app)
	if err != nil {
		return nil, err
	}
	if err := data.Set(deeplinks.KeyProject, withoutStatus(proj)); err != nil {
		return nil, err
	}
	return data, nil
}

// destinationSpec is the cluster an Application deploys to, by server or
// by name; nil when none is configured.
func destinationSpec(specs []*cluster.Spec, dst v1alpha1.ApplicationDestination) *cluster.Spec {
	for _, spec := range specs {
		if (dst.Server != "" && spec.Server == dst.Server) || (dst.Server == "" && dst.Name != "" && spec.Name == dst.Name) {
			return spec
		}
	}
	return nil
}

// typed is an Application with its apiVersion and kind, which objects
// read through a client lack.
func typed(app *v1alpha1.Application) *v1alpha1.Application {
	app = app.DeepCopy()
	app.SetGroupVersionKind(v1alpha1.ApplicationGVK)
	return app
}

// withoutStatus is a project without its status, which holds its tokens.
func withoutStatus(p *v1alpha1.AppProject) *v1alpha1.AppProject {
	p = p.DeepCopy()
	p.Status = v1alpha1.AppProjectStatus{}
	p.SetGroupVersionKind(v1alpha1.AppProjectGVK)
	return p
}

// links evaluates the links under key for data.
func (s *Server) links(r *http.Request, key string, data deeplinks.Data, name string) (any, error) {
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	links, err := cm.DeepLinks(key)
	if err != nil {
		return nil, err
	}
	items, err := deeplinks.Evaluate(links, data, name)
	if err != nil {
		s.opts.Log.Error("errors while evaluating deep links", "key", key, "name", name, "error", err)
	}
	return struct {
		Items []deeplinks.Link `json:"items,omitempty"`
	}{items}, nil
}

// withAppNamespace reads the app's namespace from the query parameter
// name, for the operations whose messages call it so.
func withAppNamespace(r *http.Request, name string) {
	q := r.URL.Query()
	if q.Has(name) && !q.Has("appNamespace") {
		q.Set("appNamespace", q.Get(name))
		r.URL.RawQuery = q.Encode()
	}
}
