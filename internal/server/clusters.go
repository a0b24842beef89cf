package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// clusterObject is a cluster's RBAC object: <project>/<server>, or the
// server URL for a cluster of no project.
func clusterObject(c *cluster.Spec) string {
	if c.Project != "" {
		return c.Project + "/" + c.Server
	}
	return c.Server
}

// clusters returns every cluster Secret's spec, and in-cluster unless a
// Secret defines it.
func (s *Server) clusters(r *http.Request) ([]*cluster.Spec, []*corev1.Secret, error) {
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
		inCluster = inCluster || spec.Server == cluster.InClusterServer
		specs, secrets = append(specs, spec), append(secrets, &list.Items[i])
	}
	if !inCluster {
		specs = append([]*cluster.Spec{{Server: cluster.InClusterServer, Name: cluster.InClusterName}}, specs...)
		secrets = append([]*corev1.Secret{nil}, secrets...)
	}
	return specs, secrets, nil
}

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request, c *caller) {
	specs, _, err := s.clusters(r)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	items := []cluster.Spec{}
	for _, spec := range specs {
		if c.can(rbac.ResourceClusters, rbac.ActionGet, clusterObject(spec)) {
			items = append(items, spec.Redacted())
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// findCluster returns the cluster the path names by server URL (or by
// name), and its Secret (nil for in-cluster without one), writing the
// error answer when there is none or the caller may not act on it.
func (s *Server) findCluster(w http.ResponseWriter, r *http.Request, c *caller, action rbac.Action) (*cluster.Spec, *corev1.Secret) {
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
		s.reply(w, nil, err)
		return nil, nil
	}
	for i, spec := range specs {
		if (!byName && spec.Server != server) || (byName && spec.Name != server) {
			continue
		}
		if !c.can(rbac.ResourceClusters, action, clusterObject(spec)) {
			c.denied(w, rbac.ResourceClusters, action, clusterObject(spec))
			return nil, nil
		}
		return spec, secrets[i]
	}
	if !c.can(rbac.ResourceClusters, action, server) {
		c.denied(w, rbac.ResourceClusters, action, server)
		return nil, nil
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("cluster %q not found", server))
	return nil, nil
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request, c *caller) {
	if spec, _ := s.findCluster(w, r, c, rbac.ActionGet); spec != nil {
		writeJSON(w, http.StatusOK, spec.Redacted())
	}
}

// createCluster answers POST /api/v1/clusters: it writes the cluster
// Secret as Argo CD does (cluster-<host>-<hash>).
func (s *Server) createCluster(w http.ResponseWriter, r *http.Request, c *caller) {
	spec := &cluster.Spec{}
	if !decodeBody(w, r, spec, "cluster", false) {
		return
	}
	spec.Server = strings.TrimSuffix(spec.Server, "/")
	if spec.Server == "" {
		writeError(w, http.StatusBadRequest, "cluster server URL is required")
		return
	}
	if spec.Name == "" {
		spec.Name = spec.Server
	}
	if object := clusterObject(spec); !c.can(rbac.ResourceClusters, rbac.ActionCreate, object) {
		c.denied(w, rbac.ResourceClusters, rbac.ActionCreate, object)
		return
	}
	sec, err := spec.Secret(s.opts.Namespace)
	if err != nil {
		s.clusterError(w, err)
		return
	}
	if code, err := s.storeSecret(r.Context(), sec, "cluster", r.URL.Query().Get("upsert") == "true"); err != nil {
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, spec.Redacted())
}

func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request, c *caller) {
	spec, sec := s.findCluster(w, r, c, rbac.ActionDelete)
	if spec == nil {
		return
	}
	if sec == nil {
		writeError(w, http.StatusBadRequest, "in-cluster has no Secret to delete")
		return
	}
	if err := s.deleteSecret(r.Context(), sec.Name); err != nil {
		s.reply(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// rotateClusterAuth answers POST /api/v1/clusters/{server}/rotate-auth:
// for a cluster added with the argocd-manager ServiceAccount, it issues a
// new token, stores it and revokes the old ones.
func (s *Server) rotateClusterAuth(w http.ResponseWriter, r *http.Request, c *caller) {
	spec, sec := s.findCluster(w, r, c, rbac.ActionUpdate)
	if spec == nil {
		return
	}
	if sec == nil {
		writeError(w, http.StatusBadRequest, "in-cluster uses the server's own credentials; there is nothing to rotate")
		return
	}
	cl, err := cluster.FromSecret(sec)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	cs, err := kubernetes.NewForConfig(cl.Config)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	token, err := cluster.RotateManagerToken(r.Context(), cs)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("rotating the credentials of cluster %s: %v", spec.Server, err))
		return
	}
	spec.Config.BearerToken = token
	fresh, err := spec.Secret(s.opts.Namespace)
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	sec.Data["config"] = fresh.Data["config"]
	if err := s.opts.Client.Update(r.Context(), sec); err != nil {
		writeError(w, statusOf(err), fmt.Sprintf("storing the new token of cluster %s: %v", spec.Server, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{})
}

// clusterError answers a cluster that cannot be stored: 400 for what the
// caller asked (a reserved annotation), 500 otherwise.
func (s *Server) clusterError(w http.ResponseWriter, err error) {
	if errors.Is(err, cluster.ErrLastAppliedAnnotation) {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.reply(w, nil, err)
}
