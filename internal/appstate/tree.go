package appstate

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/settings"
)

func listBy(fieldSelector string) metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: fieldSelector}
}

// childKinds are the kinds whose objects are created by other objects and
// owned by them: what a tree shows under the managed objects.
var childKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "ControllerRevision"},
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
}

// Tree returns the Application's live objects: each managed object the
// status lists, and the objects they own, found through owner references
// in the managed objects' namespaces.
func (r *Reader) Tree(ctx context.Context, app *v1alpha1.Application) (*Tree, error) {
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, err
	}
	cm, err := settings.LoadArgoCD(ctx, r.Client, r.Namespace)
	if err != nil {
		return nil, err
	}
	checker, _ := health.NewChecker(cm.Data) // a broken check makes its kinds Unknown, naming it
	describe := describer{checker: checker, customLabels: cm.CustomLabels()}
	filter, err := cm.ResourceFilter()
	if err != nil {
		return nil, err
	}
	tree := &Tree{Nodes: []ResourceNode{}}
	var pods []*corev1.Pod
	addPod := func(obj *unstructured.Unstructured) {
		if gvk := obj.GroupVersionKind(); gvk.Kind == "Pod" && gvk.Group == "" {
			if pod := asPod(obj); pod != nil {
				pods = append(pods, pod)
			}
		}
	}
	owners := map[types.UID]ResourceRef{}
	namespaces := map[string]bool{}
	resources := r.permittedResources(ctx, app, d)
	managed, err := readManaged(ctx, d, resources)
	if err != nil {
		return nil, err
	}
	for i, st := range resources {
		live := managed[i]
		if live == nil {
			continue
		}
		n := describe.node(live)
		if st.Health != nil {
			n.Health = &v1alpha1.HealthStatus{Status: st.Health.Status, Message: st.Health.Message}
		}
		tree.Nodes = append(tree.Nodes, n)
		addPod(live)
		owners[live.GetUID()] = n.ResourceRef
		if live.GetNamespace() != "" {
			namespaces[live.GetNamespace()] = true
		}
	}
	var candidates []*unstructured.Unstructured
	for ns := range namespaces {
		for _, gvk := range childKinds {
			if filter.Excluded(gvk.Group, gvk.Kind, d.Cluster.Server) {
				continue // never shown, as Argo CD's cache never holds it
			}
			ri, _, err := d.Resource(gvk, ns)
			if err != nil {
				continue // the kind is not served by this cluster
			}
			list, err := ri.List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing %s in %s: %w", gvk.Kind, ns, err)
			}
			for i := range list.Items {
				if len(list.Items[i].GetOwnerReferences()) > 0 {
					candidates = append(candidates, &list.Items[i])
				}
			}
		}
	}
	// Add owned objects until no more are found: Pods join once their
	// ReplicaSet has.
	for added := true; added; {
		added = false
		for i, obj := range candidates {
			if obj == nil {
				continue
			}
			var parents []ResourceRef
			for _, ref := range obj.GetOwnerReferences() {
				if p, ok := owners[ref.UID]; ok {
					parents = append(parents, p)
				}
			}
			if len(parents) == 0 {
				continue
			}
			n := describe.node(obj)
			n.ParentRefs = parents
			tree.Nodes = append(tree.Nodes, n)
			addPod(obj)
			owners[obj.GetUID()] = n.ResourceRef
			candidates[i], added = nil, true
		}
	}
	sort.Slice(tree.Nodes, func(i, j int) bool {
		return tree.Nodes[i].key().Less(tree.Nodes[j].key())
	})
	if tree.OrphanedNodes, err = r.orphanedNodes(ctx, app, d, cm, describe); err != nil {
		return nil, err
	}
	tree.Hosts = hosts(ctx, d, pods, cm.AllowedNodeLabels())
	return tree, nil
}

// readManaged reads the live objects of the status's resources, in its
// order, nil for one that does not exist: one List for each kind and
// namespace holding more than one of them, a Get otherwise, so a tree of
// a thousand ConfigMaps costs one request, not a thousand under the
// client's rate limit.
func readManaged(ctx context.Context, d *engine.Destination, resources []v1alpha1.ResourceStatus) ([]*unstructured.Unstructured, error) {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	members := map[group][]int{}
	for i, st := range resources {
		g := group{schema.GroupVersionKind{Group: st.Group, Version: st.Version, Kind: st.Kind}, st.Namespace}
		members[g] = append(members[g], i)
	}
	out := make([]*unstructured.Unstructured, len(resources))
	for g, idx := range members {
		if len(idx) == 1 {
			obj, err := d.Read(ctx, g.gvk, g.namespace, resources[idx[0]].Name)
			if err != nil {
				return nil, err
			}
			out[idx[0]] = obj
			continue
		}
		ri, _, err := d.Resource(g.gvk, g.namespace)
		if err != nil {
			return nil, err
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", g.gvk.Kind, g.namespace, err)
		}
		byName := make(map[string]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			byName[list.Items[i].GetName()] = &list.Items[i]
		}
		for _, i := range idx {
			out[i] = byName[resources[i].Name]
		}
	}
	return out, nil
}

// describer turns live objects into tree nodes.
type describer struct {
	checker *health.Checker
	// customLabels are resource.customLabels: label keys shown as
	// information beside the objects that have them.
	customLabels []string
}

// node describes one live object: its health, images and networking, and
// the information Argo CD shows beside it, in Argo CD's order (the
// rollout revision, the custom labels, then what its kind adds).
func (d describer) node(obj *unstructured.Unstructured) ResourceNode {
	gvk := obj.GroupVersionKind()
	created := obj.GetCreationTimestamp()
	n := ResourceNode{
		ResourceRef:     ResourceRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())},
		ResourceVersion: obj.GetResourceVersion(),
		Images:          manifest.Images([]*unstructured.Unstructured{obj}),
		Health:          healthOf(d.checker, obj),
		CreatedAt:       &created,
	}
	n.NetworkingInfo = networking(obj)
	if gvk.Group == "apps" && (gvk.Kind == "Deployment" || gvk.Kind == "ReplicaSet") {
		n.Info = revisionInfo(obj)
	}
	labels := obj.GetLabels()
	for _, k := range d.customLabels {
		if v, ok := labels[k]; ok {
			n.Info = append(n.Info, InfoItem{Name: k, Value: v})
		}
	}
	if gvk.Kind == "Pod" && gvk.Group == "" {
		if pod := asPod(obj); pod != nil {
			n.Info = append(n.Info, podInfo(pod)...)
		}
	}
	return n
}

// asPod converts a live Pod, nil when it is not one.
func asPod(obj *unstructured.Unstructured) *corev1.Pod {
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pod); err != nil {
		return nil
	}
	return pod
}

// podInfo is what Argo CD shows beside a Pod: its phase or the reason a
// container waits, its node, how many containers are ready and, when
// any restarted, how often.
func podInfo(pod *corev1.Pod) []InfoItem {
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	ready, restarts := 0, 0
	for _, c := range pod.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
		restarts += int(c.RestartCount)
		if c.State.Waiting != nil && c.State.Waiting.Reason != "" {
			reason = c.State.Waiting.Reason
		}
	}
	if pod.DeletionTimestamp != nil {
		reason = "Terminating"
	}
	info := []InfoItem{{Name: "Status Reason", Value: reason}, {Name: "Node", Value: pod.Spec.NodeName},
		{Name: "Containers", Value: fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers))}}
	if restarts > 0 {
		info = append(info, InfoItem{Name: "Restart Count", Value: strconv.Itoa(restarts)})
	}
	return info
}
