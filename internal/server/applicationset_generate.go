package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// applicationSetGenerateRequest is the body of Generate.
type applicationSetGenerateRequest struct {
	ApplicationSet *v1alpha1.ApplicationSet `json:"applicationSet"`
}

// applicationSetGenerateResponse lists the Applications a set would make.
type applicationSetGenerateResponse struct {
	Applications []*v1alpha1.Application `json:"applications"`
}

// servedAppSetNamespace gives an ApplicationSet without a namespace the
// control namespace, and refuses one in a namespace this server does not
// serve, for create and generate alike.
func (s *Server) servedAppSetNamespace(as *v1alpha1.ApplicationSet) error {
	if as.Namespace == "" {
		as.Namespace = s.opts.Namespace
	}
	if err := checkName("namespace", as.Namespace); err != nil {
		return err
	}
	if !s.namespaceEnabled(as.Namespace) {
		return withStatus(http.StatusForbidden, errors.New(namespaceNotPermitted(as.Namespace)))
	}
	return nil
}

// generateApplicationSet answers POST /api/v1/applicationsets/generate
// with the Applications the ApplicationSet in the body would make,
// writing nothing (`argocd appset generate`). As in Argo CD, the caller
// needs the right to create it, its namespace must be served and its
// project exist; a templated project is refused, since it would let the
// caller choose the RBAC object checked.
func (s *Server) generateApplicationSet(r *http.Request, c *caller) (any, error) {
	var req applicationSetGenerateRequest
	if err := decode(r, &req, "applicationset generate request", false); err != nil {
		return nil, err
	}
	as := req.ApplicationSet
	if as == nil {
		return nil, badRequest("error creating ApplicationSets: ApplicationSets is nil in request")
	}
	if err := s.servedAppSetNamespace(as); err != nil {
		return nil, err
	}
	project := as.Spec.Template.Spec.Project
	if strings.Contains(project, "{{") {
		return nil, badRequest("the Argo CD API does not currently support creating ApplicationSets with templated `project` fields")
	}
	if len(as.Spec.Generators) == 0 {
		return nil, badRequest(fmt.Sprintf("ApplicationSet/%s/%s has no generators", as.Namespace, as.Name))
	}
	if err := c.may(rbac.ResourceApplicationSets, rbac.ActionCreate, s.appSetObject(as)); err != nil {
		return nil, err
	}
	err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: project}, &v1alpha1.AppProject{})
	if apierrors.IsNotFound(err) {
		return nil, badRequest(fmt.Sprintf("ApplicationSet references project %s which does not exist", project))
	}
	if err != nil {
		return nil, fmt.Errorf("error getting ApplicationSet's project %q: %w", project, err)
	}
	if s.opts.AppSetPreview == nil {
		return nil, withStatus(http.StatusNotImplemented, errors.New("this API server does not generate ApplicationSets"))
	}
	apps, err := s.opts.AppSetPreview(r.Context(), as)
	if err != nil {
		return nil, badRequest(fmt.Sprintf("unable to generate Applications of ApplicationSet: %v", err))
	}
	if apps == nil {
		apps = []*v1alpha1.Application{}
	}
	return applicationSetGenerateResponse{Applications: apps}, nil
}

// applicationSetTree answers GET /api/v1/applicationsets/{name}/resource-tree
// with the Applications the set made, from its status, as Argo CD's tree.
func (s *Server) applicationSetTree(r *http.Request, c *caller) (any, error) {
	as, err := s.loadAppSet(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	parent := appstate.ResourceRef{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ApplicationSetKind,
		Namespace: as.Namespace, Name: as.Name, UID: string(as.UID)}
	tree := appstate.Tree{Nodes: []appstate.ResourceNode{}}
	for _, res := range as.Status.Resources {
		tree.Nodes = append(tree.Nodes, appstate.ResourceNode{
			ResourceRef: appstate.ResourceRef{Group: res.Group, Version: res.Version, Kind: res.Kind, Namespace: as.Namespace, Name: res.Name},
			ParentRefs:  []appstate.ResourceRef{parent},
			Health:      res.Health,
		})
	}
	return tree, nil
}
