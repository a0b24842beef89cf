package appstate

import (
	"cmp"
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Pods returns the pods of the Application's tree that ref selects: the
// pod it names, the pods a resource of the tree owns (directly or through
// ReplicaSets, Jobs, …), or, when ref names nothing, every pod of the tree.
func (r *Reader) Pods(ctx context.Context, app *v1alpha1.Application, ref ResourceRef) ([]ResourceRef, error) {
	tree, err := r.Tree(ctx, app)
	if err != nil {
		return nil, err
	}
	selected := map[ResourceRef]bool{}
	for _, n := range tree.Nodes {
		if ref.Name == "" || (n.Name == ref.Name && n.Kind == cmp.Or(ref.Kind, "Pod") && n.Group == ref.Group && (ref.Namespace == "" || n.Namespace == ref.Namespace)) {
			selected[n.ResourceRef.identity()] = true
		}
	}
	// Children of a selected node are selected, until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, n := range tree.Nodes {
			if selected[n.ResourceRef.identity()] {
				continue
			}
			for _, p := range n.ParentRefs {
				if selected[p.identity()] {
					selected[n.ResourceRef.identity()], changed = true, true
					break
				}
			}
		}
	}
	var pods []ResourceRef
	for _, n := range tree.Nodes {
		if n.Kind == "Pod" && n.Group == "" && selected[n.ResourceRef.identity()] {
			pods = append(pods, n.ResourceRef)
		}
	}
	if ref.Name != "" && len(pods) == 0 {
		return nil, NotFoundError{Ref: ref, App: app.Name}
	}
	return pods, nil
}

// Logs streams a pod's log from its cluster; the pod must be one of
// Pods'.
func (r *Reader) Logs(ctx context.Context, app *v1alpha1.Application, pod ResourceRef, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	d, err := r.dest(ctx, app)
	if err != nil {
		return nil, err
	}
	cs, err := d.Kube()
	if err != nil {
		return nil, err
	}
	rc, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the log of Pod/%s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return rc, nil
}

// identity identifies a node whatever its version and uid.
func (r ResourceRef) identity() ResourceRef {
	return ResourceRef{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// Exec runs command with a terminal in a container of a pod of the
// Application's tree (one of Pods'), as its web terminal does, acting as
// the app's syncs do; the container must be running.
func (r *Reader) Exec(ctx context.Context, app *v1alpha1.Application, pod ResourceRef, container string, command []string, opts remotecommand.StreamOptions) error {
	obj, d, err := r.live(ctx, app, ResourceRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name})
	if err != nil {
		return err
	}
	var p corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &p); err != nil {
		return err
	}
	if !containerRunning(&p, container) {
		return fmt.Errorf("container %s of Pod/%s/%s is not running", container, pod.Namespace, pod.Name)
	}
	user, err := r.actingUser(ctx, app, d)
	if err != nil {
		return err
	}
	return d.Exec(ctx, user, pod.Namespace, pod.Name, container, command, opts)
}

func containerRunning(p *corev1.Pod, container string) bool {
	for _, st := range append(append([]corev1.ContainerStatus{}, p.Status.ContainerStatuses...), p.Status.InitContainerStatuses...) {
		if st.Name == container {
			return st.State.Running != nil
		}
	}
	return false
}
