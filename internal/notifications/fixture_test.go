package notifications_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// clusterClient needs the local cluster, installs the CRDs and returns a
// client of it.
func clusterClient(t *testing.T, ctx context.Context) client.Client {
	t.Helper()
	localcluster.Need(t)
	if err := kube.InstallCRDs(ctx, testCluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newApp is an Application of the default project named name in ns,
// with annotations (its subscriptions).
func newApp(name, ns string, annotations map[string]string) *v1alpha1.Application {
	return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example/web.git", Path: "web"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
}

// markSynced writes app's status as the application controller does
// after a successful sync to rev a second ago.
func markSynced(t *testing.T, ctx context.Context, c client.Client, app *v1alpha1.Application, rev string) {
	t.Helper()
	finished := metav1.NewTime(time.Now().Add(-time.Second))
	now := metav1.Now()
	app.Status.Sync = v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: rev}
	app.Status.ReconciledAt = &now
	app.Status.OperationState = &v1alpha1.OperationState{Phase: "Succeeded", StartedAt: finished, FinishedAt: &finished,
		SyncResult: &v1alpha1.SyncOperationResult{Revision: rev}}
	if err := c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
}

// createSynced creates newApp(name, ns, annotations) and marks it synced
// to rev.
func createSynced(t *testing.T, ctx context.Context, c client.Client, name, ns string, annotations map[string]string, rev string) *v1alpha1.Application {
	t.Helper()
	app := newApp(name, ns, annotations)
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	markSynced(t, ctx, c, app, rev)
	return app
}
