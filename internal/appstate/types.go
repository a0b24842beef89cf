package appstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// ResourceDiff is one managed resource's comparison, in Argo CD's JSON
// shape: each state is the object as a JSON string, "null" when absent.
type ResourceDiff struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// TargetState is the rendered object as the sync would send it.
	TargetState string `json:"targetState,omitempty"`
	// LiveState is the live object, with Secret values masked.
	LiveState string `json:"liveState,omitempty"`
	// NormalizedLiveState is the live object as compared: server-set
	// metadata and ignored differences removed.
	NormalizedLiveState string `json:"normalizedLiveState,omitempty"`
	// PredictedLiveState is the live object as a sync would leave it,
	// normalized the same way.
	PredictedLiveState string `json:"predictedLiveState,omitempty"`
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Hook               bool   `json:"hook,omitempty"`
	// Modified is true when a sync would change the live object.
	Modified bool `json:"modified"`
}

// ResourceRef names one object.
type ResourceRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// InfoItem is a name and value shown beside a node.
type InfoItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ResourceNode is one live object of an Application's tree.
type ResourceNode struct {
	ResourceRef     `json:",inline"`
	ParentRefs      []ResourceRef          `json:"parentRefs,omitempty"`
	Info            []InfoItem             `json:"info,omitempty"`
	ResourceVersion string                 `json:"resourceVersion,omitempty"`
	Images          []string               `json:"images,omitempty"`
	Health          *v1alpha1.HealthStatus `json:"health,omitempty"`
	CreatedAt       *metav1.Time           `json:"createdAt,omitempty"`
	NetworkingInfo  *NetworkingInfo        `json:"networkingInfo,omitempty"`
}

// Tree is an Application's live objects: the managed ones and those they
// own, transitively (a Deployment's ReplicaSets and their Pods).
type Tree struct {
	Nodes         []ResourceNode `json:"nodes"`
	OrphanedNodes []ResourceNode `json:"orphanedNodes,omitempty"`
	Hosts         []HostInfo     `json:"hosts,omitempty"`
}

// Find returns the node for the object named, matching any version.
func (t *Tree) Find(group, kind, namespace, name string) *ResourceNode {
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Group == group && n.Kind == kind && n.Namespace == namespace && n.Name == name {
			return n
		}
	}
	return nil
}
