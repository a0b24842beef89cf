package appstate_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/settings"
)

// TestTreeCustomLabelsAndNodeLabels: resource.customLabels are shown as
// information beside the objects that carry them, and a Pod's host shows
// only the node labels application.allowedNodeLabels allows, none unless
// asked, as Argo CD's pods view.
func TestTreeCustomLabelsAndNodeLabels(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.deploy(t, "blue")
	nodeName := "node-" + f.dest
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
		"kubernetes.io/os": "linux", "tenant.example.com/owner": "acme"}}}
	if err := f.client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.client.Delete(context.Background(), node) })
	// No controller makes the namespace's default service account here.
	if err := f.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: f.dest}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.dest, Labels: map[string]string{"team": "payments", "tier": "web"},
			Annotations: map[string]string{v1alpha1.AnnotationTrackingID: "guestbook:/Pod:" + f.dest + "/web"}},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
	if err := f.client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.app.Status.Resources = append(f.app.Status.Resources, v1alpha1.ResourceStatus{Version: "v1", Kind: "Pod", Namespace: f.dest, Name: "web"})

	tree := f.tree(t)
	if len(tree.Hosts) != 1 || len(tree.Hosts[0].Labels) != 0 {
		t.Errorf("hosts without allowedNodeLabels: %+v, want the node without labels", tree.Hosts)
	}
	if info := tree.Find("", "Pod", f.dest, "web").Info; slices.ContainsFunc(info, func(i appstate.InfoItem) bool { return i.Name == "team" }) {
		t.Errorf("Pod info without customLabels: %+v", info)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.reader.Namespace}, Data: map[string]string{
		"resource.customLabels": "team,absent", "application.allowedNodeLabels": "kubernetes.io/os"}}
	if err := f.client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	tree = f.tree(t)
	if len(tree.Hosts) != 1 || !maps.Equal(tree.Hosts[0].Labels, map[string]string{"kubernetes.io/os": "linux"}) {
		t.Errorf("hosts: %+v, want only kubernetes.io/os", tree.Hosts)
	}
	info := tree.Find("", "Pod", f.dest, "web").Info
	if len(info) == 0 || info[0] != (appstate.InfoItem{Name: "team", Value: "payments"}) {
		t.Errorf("Pod info: %+v, want team=payments first, then the Pod's own", info)
	}
	if slices.ContainsFunc(info, func(i appstate.InfoItem) bool { return i.Name == "tier" || i.Name == "absent" }) {
		t.Errorf("Pod info shows a label not asked for: %+v", info)
	}
	if !slices.ContainsFunc(info, func(i appstate.InfoItem) bool { return i.Name == "Node" && i.Value == nodeName }) {
		t.Errorf("Pod info lost its own items: %+v", info)
	}
}

func (f *fixture) tree(t *testing.T) *appstate.Tree {
	t.Helper()
	tree, err := f.reader.Tree(context.Background(), f.app)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
