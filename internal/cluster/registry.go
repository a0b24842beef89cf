package cluster

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/settings"
)

// The in-cluster destination's server URL and name, as in Argo CD.
const (
	InClusterServer = "https://kubernetes.default.svc"
	InClusterName   = "in-cluster"
)

// Cluster is one destination cluster.
type Cluster struct {
	// Name is the cluster's name (destination.name); the server URL when unnamed.
	Name string
	// Server is the API server URL (destination.server).
	Server string
	// Namespaces, when set, are the only namespaces Capstan manages there.
	Namespaces []string
	// ClusterResources allows cluster-scoped resources when Namespaces is set.
	ClusterResources bool
	// Shard pins the cluster to one controller replica; nil means by hash.
	Shard *int64
	// Project scopes the cluster to one AppProject; empty means any.
	Project string
	// SecretName is the Secret the cluster came from; empty for in-cluster.
	SecretName string
	// ID is the Secret's UID; empty for in-cluster.
	ID string
	// Config reaches the cluster's API server.
	Config *rest.Config
	// Labels are the cluster Secret's labels but its secret-type label
	// (what argocd_cluster_labels reports).
	Labels map[string]string
	// RefreshRequested is when its cache was last asked to be rebuilt
	// (the Secret's refresh annotation); a new value rebuilds it.
	RefreshRequested string
}

// Registry lists destination clusters from the cluster Secrets of one namespace.
type Registry struct {
	// Reader reads Secrets, usually from an informer cache.
	Reader client.Reader
	// Namespace is the control namespace, by default argocd.
	Namespace string
	// InCluster reaches the cluster Capstan runs in, or the one its
	// kubeconfig names when it runs outside. Nil disables in-cluster.
	InCluster *rest.Config
	// Transport tunes the clients of the clusters read from Secrets (the
	// component tunes InCluster itself); zero keeps client-go's defaults.
	Transport kubehttp.Options

	mu sync.Mutex
	// parsed are the clusters read from the Secrets, by UID, each kept
	// while its Secret stays at the same resourceVersion: every
	// reconcile looks its destination up.
	parsed map[types.UID]parsedSecret
}

// parsedSecret is a cluster as read from one version of its Secret.
type parsedSecret struct {
	version string
	cluster *Cluster
}

// fromSecrets returns the clusters of secrets, each a copy of its own:
// a Secret read before at the same version is not parsed again.
func (r *Registry) fromSecrets(secrets []corev1.Secret) ([]*Cluster, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parsed == nil {
		r.parsed = map[types.UID]parsedSecret{}
	}
	seen := make(map[types.UID]bool, len(secrets))
	out := make([]*Cluster, 0, len(secrets))
	for i := range secrets {
		s := &secrets[i]
		seen[s.UID] = true
		p, ok := r.parsed[s.UID]
		if !ok || p.version != s.ResourceVersion || s.UID == "" {
			c, err := fromSecret(s)
			if err != nil {
				return nil, err
			}
			r.Transport.Apply(c.Config)
			p = parsedSecret{version: s.ResourceVersion, cluster: c}
			r.parsed[s.UID] = p
		}
		out = append(out, p.cluster.copy())
	}
	for uid := range r.parsed {
		if !seen[uid] {
			delete(r.parsed, uid)
		}
	}
	return out, nil
}

// copy returns a copy of c its caller may change.
func (c *Cluster) copy() *Cluster {
	cp := *c
	cp.Namespaces = slices.Clone(c.Namespaces)
	cp.Config = rest.CopyConfig(c.Config)
	return &cp
}

// List returns in-cluster (unless a Secret redefines it, or argocd-cm's
// cluster.inClusterEnabled is "false") and every cluster Secret. A
// malformed Secret fails the whole list, naming the Secret.
func (r *Registry) List(ctx context.Context) ([]*Cluster, error) {
	all, _, err := r.list(ctx)
	return all, err
}

// InClusterEnabled reads argocd-cm's cluster.inClusterEnabled; an
// argocd-cm that cannot be read leaves in-cluster enabled, as in Argo CD.
func (r *Registry) InClusterEnabled(ctx context.Context) bool {
	cm, err := settings.LoadArgoCD(ctx, r.Reader, r.Namespace)
	return err != nil || cm.InClusterEnabled()
}

// list is List, and whether in-cluster is enabled.
func (r *Registry) list(ctx context.Context) ([]*Cluster, bool, error) {
	inClusterEnabled := r.InClusterEnabled(ctx)
	var secrets corev1.SecretList
	// Read, never changed: the cache's objects need no copy.
	if err := r.Reader.List(ctx, &secrets, client.InNamespace(r.Namespace),
		client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, inClusterEnabled, fmt.Errorf("listing cluster Secrets in %s: %w", r.Namespace, err)
	}
	clusters, err := r.fromSecrets(secrets.Items)
	if err != nil {
		return nil, inClusterEnabled, err
	}
	var out []*Cluster
	inClusterDefined := false
	for _, c := range clusters {
		if c.Server == InClusterServer && !inClusterEnabled {
			continue
		}
		if c.Server == InClusterServer {
			inClusterDefined = true
			if c.Name == InClusterServer {
				c.Name = InClusterName
			}
			if r.InCluster != nil && c.Config.BearerToken == "" && len(c.Config.CertData) == 0 {
				// A Secret that only names or scopes in-cluster keeps its credentials.
				cfg := rest.CopyConfig(r.InCluster)
				c.Config = cfg
			}
		}
		if r.InCluster != nil {
			// Every cluster gets the controller's client rate limits.
			c.Config.QPS, c.Config.Burst = r.InCluster.QPS, r.InCluster.Burst
		}
		out = append(out, c)
	}
	if !inClusterDefined && inClusterEnabled && r.InCluster != nil {
		out = append([]*Cluster{{Name: InClusterName, Server: InClusterServer, Config: rest.CopyConfig(r.InCluster)}}, out...)
	}
	return out, inClusterEnabled, nil
}

// ShardOf returns the controller replica, of replicas, that manages the
// cluster by Argo CD's legacy algorithm: the Secret's shard (replica 0
// when no replica has that number), otherwise a hash of the Secret's UID;
// in-cluster without a Secret belongs to replica 0.
func (c *Cluster) ShardOf(replicas int) int {
	if replicas <= 1 {
		return 0
	}
	if c.Shard != nil {
		if *c.Shard >= 0 && *c.Shard < int64(replicas) {
			return int(*c.Shard)
		}
		return 0 // a shard no replica has, as Argo CD places it
	}
	if c.ID == "" {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(c.ID))
	return int(h.Sum32() % uint32(replicas))
}

// Get returns the cluster an Application's destination names, by server
// URL or by name (exactly one of them must be set, as Argo CD requires).
func (r *Registry) Get(ctx context.Context, dest v1alpha1.ApplicationDestination) (*Cluster, error) {
	if dest.Server != "" && dest.Name != "" {
		return nil, destinationErr("application destination can't have both name and server defined: %s %s", dest.Name, dest.Server)
	}
	if dest.Server == "" && dest.Name == "" {
		return nil, destinationErr("Destination server missing from app spec")
	}
	all, inClusterEnabled, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	if !inClusterEnabled && strings.TrimSuffix(dest.Server, "/") == InClusterServer {
		return nil, destinationErr("cluster %q is disabled", InClusterServer)
	}
	var found []*Cluster
	for _, c := range all {
		if (dest.Server != "" && c.Server == strings.TrimSuffix(dest.Server, "/")) || (dest.Name != "" && c.Name == dest.Name) {
			found = append(found, c)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1 && dest.Name != "":
		return nil, destinationErr("there are %d clusters with the same name: %s", len(found), dest.Name)
	case len(found) > 1:
		return found[0], nil
	case dest.Name != "":
		return nil, destinationErr("application references destination cluster %s which does not exist", dest.Name)
	default:
		return nil, destinationErr("cluster '%s' has not been configured", dest.Server)
	}
}

// DestinationError is an Application destination that names no
// registered cluster, or names one ambiguously. Its message is Argo CD's.
type DestinationError struct{ Message string }

func (e *DestinationError) Error() string { return e.Message }

func destinationErr(format string, args ...any) error {
	return &DestinationError{Message: fmt.Sprintf(format, args...)}
}
