package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSyncWindows: an open deny window keeps automated syncs from
// running and holds a requested sync Running with Argo CD's message;
// with manualSync the requested sync runs while automated ones still
// wait; once the project drops the window, everything syncs at once (a
// project change is acted on without waiting for the resync).
func TestSyncWindows(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, testCluster.Config); err != nil {
		t.Fatal(err)
	}
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) { o.Resync = time.Hour })
	deny := &v1alpha1.SyncWindow{Kind: project.WindowDeny, Schedule: "* * * * *", Duration: "24h", Applications: []string{"*"}}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "frozen", Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SyncWindows: v1alpha1.SyncWindows{deny},
	}}
	e.create(proj)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"auto/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: auto}\n",
		"manual/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: manual}\n",
	})
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}
	manual := newApp(e, "manual", "frozen", remote.URL, "manual", dest)
	manual.Spec.SyncPolicy = nil
	e.create(newApp(e, "auto", "frozen", remote.URL, "auto", dest), manual)

	requestSync := func() {
		e.update("manual", func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}
		})
	}
	requestSync()
	e.eventually("the requested sync held by the window", func() string {
		st := e.app("manual").Status.OperationState
		if st != nil && st.Phase == v1alpha1.OperationRunning && st.Message == project.OperationBlockedBySyncWindow {
			return ""
		}
		return fmt.Sprintf("operation %+v", st)
	})
	e.eventually("the automated app compared", func() string {
		if s := e.app("auto").Status.Sync.Status; s != v1alpha1.SyncStatusCodeOutOfSync {
			return string(s)
		}
		return ""
	})
	time.Sleep(2 * time.Second) // room for a sync that should not happen
	for _, name := range []string{"auto", "manual"} {
		if _, err := e.kube.CoreV1().ConfigMaps(dest.Namespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("ConfigMap %s was applied inside a deny window (%v)", name, err)
		}
	}
	if st := e.app("auto").Status.OperationState; st != nil {
		t.Fatalf("an automated sync started inside a deny window: %+v", st)
	}

	// manualSync lets the held sync through; the automated one still waits.
	editProject(t, e, "frozen", func(p *v1alpha1.AppProject) { p.Spec.SyncWindows[0].ManualSync = true })
	e.eventually("the manual sync run", func() string {
		if st := e.app("manual").Status.OperationState; st == nil || st.Phase != v1alpha1.OperationSucceeded {
			return fmt.Sprintf("operation %+v", st)
		}
		return ""
	})
	if st := e.app("auto").Status.OperationState; st != nil {
		t.Fatalf("an automated sync ran inside a deny window with manualSync: %+v", st)
	}

	editProject(t, e, "frozen", func(p *v1alpha1.AppProject) { p.Spec.SyncWindows = nil })
	e.waitSyncedHealthy("auto")
}

// editProject changes an AppProject as a user would.
func editProject(t *testing.T, e *env, name string, change func(*v1alpha1.AppProject)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &v1alpha1.AppProject{}
		if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, p); err != nil {
			return err
		}
		change(p)
		return e.client.Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}
