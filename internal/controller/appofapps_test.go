package controller

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestAppOfApps syncs a parent Application whose manifests are child
// Applications: the children are reconciled in turn, the parent's health
// follows theirs and its summary says it is an app of apps, and a child
// removed from Git is pruned with its resources.
func TestAppOfApps(t *testing.T) {
	localcluster.Need(t)
	e := start(t)
	ctx := context.Background()
	dest := testCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	child := func(name string) string {
		return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %[1]s
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source: {repoURL: %[2]s, path: children/%[1]s}
  destination: {server: https://kubernetes.default.svc, namespace: %[3]s}
  syncPolicy: {automated: {prune: true}}
`, name, remote.URL, dest)
	}
	remote.Commit(t, "apps", map[string]string{
		"parent/one.yaml":      child("one"),
		"parent/two.yaml":      child("two"),
		"children/one/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n",
		"children/two/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n",
	})
	parent := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "parent", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "parent"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: e.ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
		},
	}
	if err := e.client.Create(ctx, parent); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("one")
	e.waitSyncedHealthy("two")
	e.waitSyncedHealthy("parent")
	for _, rs := range e.app("parent").Status.Resources {
		if rs.Kind != "Application" || rs.Health == nil || rs.Health.Status != v1alpha1.HealthStatusHealthy {
			t.Errorf("parent resource %s/%s health %+v", rs.Kind, rs.Name, rs.Health)
		}
	}
	if !e.app("parent").Status.Summary.IsAppOfApps || e.app("one").Status.Summary.IsAppOfApps {
		t.Errorf("summary.isAppOfApps: parent %t, child %t; want true, false",
			e.app("parent").Status.Summary.IsAppOfApps, e.app("one").Status.Summary.IsAppOfApps)
	}

	remote.Commit(t, "drop two", map[string]string{"parent/two.yaml": ""})
	e.eventually("child two and its ConfigMap pruned", func() string {
		err := e.client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "two"}, &v1alpha1.Application{})
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("Application two: %v", err)
		}
		if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "two", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("ConfigMap two: %v", err)
		}
		return ""
	})
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "one", metav1.GetOptions{}); err != nil {
		t.Errorf("child one's ConfigMap: %v", err)
	}
}
