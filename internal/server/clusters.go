package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// clusterRoutes registers the cluster service.
func (s *Server) clusterRoutes() {
	s.mux.HandleFunc("GET /api/v1/clusters", s.api(s.listClusters))
	s.mux.HandleFunc("GET /api/v1/clusters/{server}", s.api(s.getCluster))
	s.mux.HandleFunc("POST /api/v1/clusters", s.api(s.createCluster))
	s.mux.HandleFunc("DELETE /api/v1/clusters/{server}", s.api(s.deleteCluster))
	s.mux.HandleFunc("POST /api/v1/clusters/{server}/rotate-auth", s.api(s.rotateClusterAuth))
	s.mux.HandleFunc("PUT /api/v1/clusters/{server}", s.api(s.updateCluster))
	s.mux.HandleFunc("POST /api/v1/clusters/{server}/invalidate-cache", s.api(s.invalidateClusterCache))
}

// clusterObject is a cluster's RBAC object: <project>/<server>, or the
// server URL for a cluster of no project.
func clusterObject(c *cluster.Spec) string {
	if c.Project != "" {
		return c.Project + "/" + c.Server
	}
	return c.Server
}

// clusters returns every cluster Secret's spec, and in-cluster unless a
// Secret defines it; none for in-cluster while argocd-cm's
// cluster.inClusterEnabled is "false".
func (s *Server) clusters(r *http.Request) ([]*cluster.Spec, []*corev1.Secret, error) {
	enabled := s.state.Clusters.InClusterEnabled(r.Context())
	var list corev1.SecretList
	if err := s.opts.Client.List(r.Context(), &list, client.InNamespace(s.opts.Namespace),
		client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}); err != nil {
		return nil, nil, err
	}
	var specs []*cluster.Spec
	var secrets []*corev1.Secret
	inCluster := false
	for i := range list.Items {
		spec, err := cluster.SpecOf(&list.Items[i])
		if err != nil {
			return nil, nil, err
		}
		if spec.Server == cluster.InClusterServer && !enabled {
			continue
		}
		inCluster = inCluster || spec.Server == cluster.InClusterServer
		specs, secrets = append(specs, spec), append(secrets, &list.Items[i])
	}
	if !inCluster && enabled {
		specs = append([]*cluster.Spec{{Server: cluster.InClusterServer, Name: cluster.InClusterName}}, specs...)
		secrets = append([]*corev1.Secret{nil}, secrets...)
	}
	return specs, secrets, nil
}

func (s *Server) listClusters(r *http.Request, c *caller) (any, error) {
	specs, _, err := s.clusters(r)
	if err != nil {
		return nil, err
	}
	s.clusterProbes.keep(specs)
	var visible []*cluster.Spec
	for _, spec := range specs {
		if c.can(rbac.ResourceClusters, rbac.ActionGet, clusterObject(spec)) {
			visible = append(visible, spec)
		}
	}
	return apiwire.ClusterList{Items: s.clusterViews(r.Context(), visible)}, nil
}

// findCluster returns the cluster the path names by server URL (or by
// name), and its Secret (nil for in-cluster without one); 404 when there
// is none and 403 when the caller may not act on it.
func (s *Server) findCluster(r *http.Request, c *caller, action rbac.Action) (*cluster.Spec, *corev1.Secret, error) {
	server := strings.TrimSuffix(r.PathValue("server"), "/")
	byName := r.URL.Query().Get("id.type") == "name"
	if r.URL.Query().Get("id.type") == "name_escaped" {
		byName = true
		if unescaped, err := url.QueryUnescape(server); err == nil {
			server = unescaped
		}
	}
	specs, secrets, err := s.clusters(r)
	if err != nil {
		return nil, nil, err
	}
	for i, spec := range specs {
		if (!byName && spec.Server != server) || (byName && spec.Name != server) {
			continue
		}
		if err := c.may(rbac.ResourceClusters, action, clusterObject(spec)); err != nil {
			return nil, nil, err
		}
		return spec, secrets[i], nil
	}
	if err := c.may(rbac.ResourceClusters, action, server); err != nil {
		return nil, nil, err
	}
	return nil, nil, notFound(fmt.Sprintf("cluster %q not found", server))
}

func (s *Server) getCluster(r *http.Request, c *caller) (any, error) {
	spec, _, err := s.findCluster(r, c, rbac.ActionGet)
	if err != nil {
		return nil, err
	}
	return s.clusterViews(r.Context(), []*cluster.Spec{spec})[0], nil
}

// createCluster answers POST /api/v1/clusters: it writes the cluster
// Secret as Argo CD does (cluster-<host>-<hash>).
func (s *Server) createCluster(r *http.Request, c *caller) (any, error) {
	spec := &cluster.Spec{}
	if err := decode(r, spec, "cluster", false); err != nil {
		return nil, err
	}
	spec.Server = strings.TrimSuffix(spec.Server, "/")
	if spec.Server == "" {
		return nil, badRequest("cluster server URL is required")
	}
	if spec.Name == "" {
		spec.Name = spec.Server
	}
	if object := clusterObject(spec); !c.can(rbac.ResourceClusters, rbac.ActionCreate, object) {
		return nil, c.forbidden(rbac.ResourceClusters, rbac.ActionCreate, object)
	}
	if spec.Server == cluster.InClusterServer && !s.state.Clusters.InClusterEnabled(r.Context()) {
		return nil, badRequest("cannot register cluster: in-cluster has been disabled")
	}
	sec, err := spec.Secret(s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	m := managedSecret{secret: sec, what: "cluster",
		stored: func(context.Context) (*corev1.Secret, error) { return s.storedCluster(r, spec.Server) },
		mayReplace: func(stored *corev1.Secret) error {
			old, err := cluster.SpecOf(stored)
			if err != nil {
				return err
			}
			return c.may(rbac.ResourceClusters, rbac.ActionUpdate, clusterObject(old))
		}}
	if err := s.storeSecret(r.Context(), m, r.URL.Query().Get("upsert") == "true"); err != nil {
		return nil, err
	}
	return spec.Redacted(), nil
}

// storedCluster returns the stored Secret of the cluster at server,
// whatever its name, or nil.
func (s *Server) storedCluster(r *http.Request, server string) (*corev1.Secret, error) {
	specs, secrets, err := s.clusters(r)
	if err != nil {
		return nil, err
	}
	for i, spec := range specs {
		if spec.Server == server && secrets[i] != nil {
			return secrets[i], nil
		}
	}
	return nil, nil
}

func (s *Server) deleteCluster(r *http.Request, c *caller) (any, error) {
	_, sec, err := s.findCluster(r, c, rbac.ActionDelete)
	if err != nil {
		return nil, err
	}
	if sec == nil {
		return nil, badRequest("in-cluster has no Secret to delete")
	}
	if err := s.deleteSecret(r.Context(), sec.Name); err != nil {
		return nil, err
	}
	return map[string]string{}, nil
}

// rotateClusterAuth answers POST /api/v1/clusters/{server}/rotate-auth:
// for a cluster added with the argocd-manager ServiceAccount, it issues a
// new token, stores it and revokes the old ones.
func (s *Server) rotateClusterAuth(r *http.Request, c *caller) (any, error) {
	spec, sec, err := s.findCluster(r, c, rbac.ActionUpdate)
	if err != nil {
		return nil, err
	}
	if sec == nil {
		return nil, badRequest("in-cluster uses the server's own credentials; there is nothing to rotate")
	}
	cl, err := cluster.FromSecret(sec)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cl.Config)
	if err != nil {
		return nil, err
	}
	token, err := cluster.RotateManagerToken(r.Context(), cs)
	if err != nil {
		return nil, badRequest(fmt.Sprintf("rotating the credentials of cluster %s: %v", spec.Server, err))
	}
	spec.Config.BearerToken = token
	fresh, err := spec.Secret(s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	sec.Data["config"] = fresh.Data["config"]
	if err := s.opts.Client.Update(r.Context(), sec); err != nil {
		return nil, fmt.Errorf("storing the new token of cluster %s: %w", spec.Server, err)
	}
	return map[string]string{}, nil
}
