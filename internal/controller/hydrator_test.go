package controller

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestSourceHydratorSyncsTheHydratedBranch: an Application written for
// Argo CD's source hydrator syncs, as Argo CD's controller does, what its
// syncSource names (the hydrated branch and path), not its dry source.
func TestSourceHydratorSyncsTheHydratedBranch(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	dest := testCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "dry", map[string]string{"dry/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\n"})
	remote.Branch(t, "environments/dev")
	remote.Commit(t, "hydrated", map[string]string{"dev/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hydrated}\n"})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "hydrated", Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default",
			SourceHydrator: &v1alpha1.SourceHydrator{
				DrySource:  v1alpha1.DrySource{RepoURL: remote.URL, TargetRevision: "HEAD", Path: "dry"},
				SyncSource: v1alpha1.SyncSource{TargetBranch: "environments/dev", Path: "dev"},
			},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := e.client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	e.waitSyncedHealthy("hydrated")
	if _, err := e.kube.CoreV1().ConfigMaps(dest).Get(ctx, "hydrated", metav1.GetOptions{}); err != nil {
		t.Errorf("the hydrated branch's ConfigMap: %v", err)
	}
	if got := e.app("hydrated").Status.Sync.Revision; got != remote.Head(t, "environments/dev") {
		t.Errorf("synced revision %s, want the hydrated branch's head", got)
	}
}
