package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestInstallationID: with argocd-cm's installationID set, what a sync
// applies is marked as this installation's, and an object another
// installation tracks for an Application of the same name is neither
// shown nor pruned.
func TestInstallationID(t *testing.T) {
	ctx := context.Background()
	c, ns := controlNamespace(t)
	for _, obj := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns}, Data: map[string]string{"installationID": "blue"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns, Annotations: map[string]string{
			v1alpha1.AnnotationTrackingID: "shared:/ConfigMap:" + ns + "/theirs", v1alpha1.AnnotationInstallationID: "green"}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	e := startIn(t, ns)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"app/ours.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ours}\n"})
	app := newApp(e, "shared", "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns})
	app.Spec.SyncPolicy.Automated.Prune = true
	e.create(app)
	e.waitSyncedHealthy("shared")
	ours, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "ours", metav1.GetOptions{})
	if err != nil || ours.Annotations[v1alpha1.AnnotationInstallationID] != "blue" {
		t.Fatalf("ours: %v %v", err, ours.GetAnnotations())
	}
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("another installation's object was pruned: %v", err)
	}
	for _, r := range e.app("shared").Status.Resources {
		if r.Name == "theirs" {
			t.Errorf("another installation's object is shown as the Application's: %+v", r)
		}
	}
}
