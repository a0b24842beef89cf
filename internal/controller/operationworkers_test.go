package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestOperationWorkersBoundSyncs: with one operation processor
// (controller.operation.processors), a second Application's sync waits
// while the first one's is held on a wave, and runs once it is done.
func TestOperationWorkersBoundSyncs(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := testCluster.NewNamespace(t)
	e := startWith(t, ns, func(o *Options) { o.OperationWorkers = 1 })
	e.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns},
		Data: map[string]string{"resource.customizations.health.ConfigMap": gateHealth}})
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "gated", map[string]string{"app/gate.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gate\n  labels: {gate: \"true\"}\n",
		"app/after.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n  annotations: {argocd.argoproj.io/sync-wave: \"1\"}\n"})
	dests := map[string]string{}
	sync := func(name string) {
		dests[name] = testCluster.NewNamespace(t)
		app := newApp(e, name, "default", remote.URL, "app", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dests[name]})
		app.Spec.SyncPolicy = nil
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}
		e.create(app)
	}
	running := func(name string) bool {
		st := e.app(name).Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationRunning
	}
	openGate := func(name string) {
		e.eventually(name+"'s gate opened", func() string {
			_, err := e.kube.CoreV1().ConfigMaps(dests[name]).Patch(ctx, "gate", types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"test.capstan.io/ready":"true"}}}`), metav1.PatchOptions{FieldManager: "test"})
			if err != nil {
				return err.Error()
			}
			return ""
		})
	}
	finished := func(name string) {
		e.eventually(name+"'s sync finished", func() string {
			if st := e.app(name).Status.OperationState; st == nil || st.Phase != v1alpha1.OperationSucceeded {
				return fmt.Sprintf("%+v", st)
			}
			return ""
		})
	}

	sync("first")
	e.eventually("the first sync held on its gate", func() string {
		if !running("first") {
			return "not running"
		}
		return ""
	})
	sync("second")
	time.Sleep(3 * time.Second) // room for a second sync that should not start
	if st := e.app("second").Status.OperationState; st != nil {
		t.Fatalf("a second sync started beside the first with one operation processor: %+v", st)
	}
	openGate("first")
	finished("first")
	e.eventually("the second sync under way", func() string {
		if !running("second") {
			return fmt.Sprintf("%+v", e.app("second").Status.OperationState)
		}
		return ""
	})
	openGate("second")
	finished("second")
}
