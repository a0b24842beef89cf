package server

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/rbac"
)

// clusterFields are the fields PUT /api/v1/clusters/{server}?updatedFields=
// may name, as Argo CD allows them; other names are ignored.
var clusterFields = map[string]func(dst, src *cluster.Spec){
	"name":             func(d, s *cluster.Spec) { d.Name = s.Name },
	"namespaces":       func(d, s *cluster.Spec) { d.Namespaces = s.Namespaces },
	"config":           func(d, s *cluster.Spec) { d.Config = s.Config },
	"shard":            func(d, s *cluster.Spec) { d.Shard = s.Shard },
	"clusterResources": func(d, s *cluster.Spec) { d.ClusterResources = s.ClusterResources },
	"labels":           func(d, s *cluster.Spec) { d.Labels = s.Labels },
	"annotations":      func(d, s *cluster.Spec) { d.Annotations = s.Annotations },
	"project":          func(d, s *cluster.Spec) { d.Project = s.Project },
}

// clusterCheckTimeout bounds the connection test of changed credentials.
const clusterCheckTimeout = 15 * time.Second

// updateCluster answers PUT /api/v1/clusters/{server}: the fields the
// updatedFields query names are taken from the body, or with none the
// whole cluster (an empty config keeps the stored credentials). New
// credentials are tried before they are stored. The caller needs
// clusters update on the cluster, and on its new project when it moves.
func (s *Server) updateCluster(r *http.Request, c *caller) (any, error) {
	body := &cluster.Spec{}
	if err := decode(r, body, "cluster", false); err != nil {
		return nil, err
	}
	existing, sec, err := s.findCluster(r, c, rbac.ActionUpdate)
	if err != nil {
		return nil, err
	}
	fields := r.URL.Query()["updatedFields"]
	updated := *existing
	if len(fields) == 0 {
		updated = *body
		updated.Server, updated.RefreshRequestedAt = existing.Server, existing.RefreshRequestedAt
		if reflect.ValueOf(body.Config).IsZero() {
			updated.Config = existing.Config
		}
	}
	for _, f := range fields {
		if set, ok := clusterFields[f]; ok {
			set(&updated, body)
		}
	}
	if updated.Project != existing.Project {
		if object := clusterObject(&updated); !c.can(rbac.ResourceClusters, rbac.ActionUpdate, object) {
			return nil, c.forbidden(rbac.ResourceClusters, rbac.ActionUpdate, object)
		}
	}
	if !reflect.DeepEqual(updated.Config, existing.Config) {
		if err := s.checkCluster(r.Context(), &updated); err != nil {
			return nil, badRequest(err.Error())
		}
	}
	return s.storeCluster(r, &updated, sec)
}

// invalidateClusterCache answers POST /api/v1/clusters/{server}/invalidate-cache:
// the cluster's refresh time is set, and the controller and API server
// rebuild their clients and watch caches of it.
func (s *Server) invalidateClusterCache(r *http.Request, c *caller) (any, error) {
	spec, sec, err := s.findCluster(r, c, rbac.ActionUpdate)
	if err != nil {
		return nil, err
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	spec.RefreshRequestedAt = &now
	return s.storeCluster(r, spec, sec)
}

// checkCluster connects to a cluster with its new credentials.
func (s *Server) checkCluster(ctx context.Context, spec *cluster.Spec) error {
	sec, err := spec.Secret(s.opts.Namespace)
	if err != nil {
		return err
	}
	cl, err := cluster.FromSecret(sec)
	if err != nil {
		return err
	}
	cfg := *cl.Config
	cfg.Timeout = clusterCheckTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(&cfg)
	if err == nil {
		_, err = dc.ServerVersion()
	}
	if err != nil {
		return fmt.Errorf("cannot reach cluster %s with the new configuration: %w", spec.Server, err)
	}
	return nil
}

// storeCluster writes spec into its Secret (sec, or a new one for
// in-cluster, which has none until it is changed) and answers it.
func (s *Server) storeCluster(r *http.Request, spec *cluster.Spec, sec *corev1.Secret) (any, error) {
	fresh, err := spec.Secret(s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	if sec == nil {
		err = s.opts.Client.Create(r.Context(), fresh)
	} else {
		// The Secret keeps its name and whatever else it holds.
		sec.Data, sec.Labels = fresh.Data, fresh.Labels
		for k := range sec.Annotations {
			if _, keep := fresh.Annotations[k]; !keep && !slices.Contains(systemAnnotations, k) {
				delete(sec.Annotations, k)
			}
		}
		if sec.Annotations == nil {
			sec.Annotations = map[string]string{}
		}
		for k, v := range fresh.Annotations {
			sec.Annotations[k] = v
		}
		err = s.opts.Client.Update(r.Context(), sec)
	}
	if err != nil {
		return nil, fmt.Errorf("storing cluster %s: %w", spec.Server, err)
	}
	return spec.Redacted(), nil
}

// systemAnnotations are annotations of a cluster Secret that the cluster's
// own annotations never replace.
var systemAnnotations = []string{"kubectl.kubernetes.io/last-applied-configuration"}
