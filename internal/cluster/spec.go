package cluster

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Spec is a cluster as Argo CD's API describes it, and as its cluster
// Secret stores it.
type Spec struct {
	Server           string            `json:"server"`
	Name             string            `json:"name,omitempty"`
	Config           Config            `json:"config"`
	Namespaces       []string          `json:"namespaces,omitempty"`
	ClusterResources bool              `json:"clusterResources,omitempty"`
	Project          string            `json:"project,omitempty"`
	Shard            *int64            `json:"shard,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	Annotations      map[string]string `json:"annotations,omitempty"`
	// RefreshRequestedAt is when the cluster's cache was last asked to be
	// rebuilt (stored as the Secret's refresh annotation).
	RefreshRequestedAt *metav1.Time `json:"refreshRequestedAt,omitempty"`
}

// maxSecretName is the longest name the API server takes.
const maxSecretName = 253

// SecretName is the name of a new cluster's Secret, shaped as Argo CD
// shapes it: cluster-<host>-<hash of the server URL>, the hash
// settings.SecretNameHash (Argo CD's 32-bit one can be aimed at another
// cluster's name). Clusters are found by their server, never by name.
func SecretName(server string) string {
	host := server
	if u, err := url.Parse(server); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	hash := settings.SecretNameHash(server)
	host = strings.ToLower(host)
	host = host[:min(len(host), maxSecretName-len("cluster--")-len(hash))]
	return "cluster-" + host + "-" + hash
}

// ErrLastAppliedAnnotation refuses a cluster whose annotations would set
// kubectl's last applied configuration, which copies the credentials.
var ErrLastAppliedAnnotation = fmt.Errorf("annotation %s cannot be set", corev1.LastAppliedConfigAnnotation)

// Secret returns the cluster Secret for s in namespace.
func (s *Spec) Secret(namespace string) (*corev1.Secret, error) {
	cfg, err := json.Marshal(s.Config)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{v1alpha1.LabelSecretType: v1alpha1.SecretTypeCluster}
	for k, v := range s.Labels {
		labels[k] = v
	}
	if _, ok := s.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		return nil, ErrLastAppliedAnnotation
	}
	annotations := map[string]string{v1alpha1.AnnotationManagedBy: v1alpha1.ManagedByArgoCD}
	for k, v := range s.Annotations {
		annotations[k] = v
	}
	if s.RefreshRequestedAt != nil {
		annotations[v1alpha1.AnnotationRefresh] = s.RefreshRequestedAt.UTC().Format(time.RFC3339)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(s.Server), Namespace: namespace, Labels: labels, Annotations: annotations},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"server": []byte(s.Server), "name": []byte(s.Name), "config": cfg},
	}
	if len(s.Namespaces) > 0 {
		sec.Data["namespaces"] = []byte(strings.Join(s.Namespaces, ","))
	}
	if s.ClusterResources {
		sec.Data["clusterResources"] = []byte("true")
	}
	if s.Project != "" {
		sec.Data["project"] = []byte(s.Project)
	}
	if s.Shard != nil {
		sec.Data["shard"] = []byte(strconv.FormatInt(*s.Shard, 10))
	}
	return sec, nil
}

// SpecOf reads a cluster Secret back into a Spec.
func SpecOf(sec *corev1.Secret) (*Spec, error) {
	c, err := fromSecret(sec)
	if err != nil {
		return nil, err
	}
	s := &Spec{Server: c.Server, Name: c.Name, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources, Project: c.Project, Shard: c.Shard}
	if raw := sec.Data["config"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &s.Config); err != nil {
			return nil, fmt.Errorf("cluster Secret/%s/%s: config: %w", sec.Namespace, sec.Name, err)
		}
	}
	for k, v := range sec.Labels {
		if k != v1alpha1.LabelSecretType {
			if s.Labels == nil {
				s.Labels = map[string]string{}
			}
			s.Labels[k] = v
		}
	}
	if at, err := time.Parse(time.RFC3339, sec.Annotations[v1alpha1.AnnotationRefresh]); err == nil {
		s.RefreshRequestedAt = &metav1.Time{Time: at}
	}
	for k, v := range sec.Annotations {
		// kubectl's last applied configuration would hold the credentials:
		// never shown (Argo CD's CVE-2023-40029).
		if k != v1alpha1.AnnotationManagedBy && k != v1alpha1.AnnotationRefresh && k != corev1.LastAppliedConfigAnnotation {
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations[k] = v
		}
	}
	return s, nil
}

// Redacted returns s without credentials, as the API shows clusters.
func (s Spec) Redacted() Spec {
	s.Config = Config{TLSClientConfig: TLSClientConfig{Insecure: s.Config.TLSClientConfig.Insecure, ServerName: s.Config.TLSClientConfig.ServerName}}
	return s
}
