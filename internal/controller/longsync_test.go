package controller

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// gateHealth is a custom health check that keeps a ConfigMap labelled
// gate=true Progressing until the test annotates it ready: it makes a
// wave wait as long as the test wants.
const gateHealth = `
if obj.metadata.labels ~= nil and obj.metadata.labels["gate"] == "true" then
  if obj.metadata.annotations ~= nil and obj.metadata.annotations["test.capstan.io/ready"] == "true" then
    return {status = "Healthy"}
  end
  return {status = "Progressing", message = "waiting for the test"}
end
return {status = "Healthy"}
`

// wavedApp is a PreSync hook Job (deleted when it succeeds), three waves
// of gated ConfigMaps and a last wave after them.
func wavedApp() map[string]string {
	files := map[string]string{"waves/hook.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrate:1.0}]
`, "waves/last.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: last\n  annotations: {argocd.argoproj.io/sync-wave: \"4\"}\n"}
	for w := 1; w <= 3; w++ {
		files[fmt.Sprintf("waves/wave%d.yaml", w)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wave%d\n  labels: {gate: \"true\"}\n  annotations: {argocd.argoproj.io/sync-wave: \"%d\"}\n", w, w)
	}
	return files
}

// bigApp is n ConfigMaps in one directory.
func bigApp(n int) map[string]string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%05d}\ndata: {index: \"%d\"}\n", i, i)
	}
	return map[string]string{"big/all.yaml": b.String()}
}

// TestLongSyncFinishesOnce runs, with no kill, a sync that lasts about a
// minute (a PreSync hook Job, then three waves that each wait on health)
// beside an automated sync of 5,000 objects, and checks both finish: the
// operation is cleared, the hook ran once, and each app has one history
// entry. While it runs, its progress is recorded in the status.
func TestLongSyncFinishesOnce(t *testing.T) {
	localcluster.Need(t)
	const bigObjects = 5000
	waveWait := 20 * time.Second
	if testing.Short() {
		waveWait = 3 * time.Second
	}
	e := start(t)
	e.timeout = 5 * time.Minute
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: e.ns},
		Data:       map[string]string{"resource.customizations.health.ConfigMap": gateHealth},
	}); err != nil {
		t.Fatal(err)
	}
	remote := gitserver.NewLocalRepo(t)
	files := wavedApp()
	for k, v := range bigApp(bigObjects) {
		files[k] = v
	}
	remote.Commit(t, "apps", files)
	wavesNS, bigNS := testCluster.NewNamespace(t), testCluster.NewNamespace(t)

	jobs, err := e.kube.BatchV1().Jobs(wavesNS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer jobs.Stop()
	var hookRuns atomic.Int32
	go func() {
		for ev := range jobs.ResultChan() {
			if ev.Type == watch.Added {
				hookRuns.Add(1)
			}
		}
	}()

	mkApp := func(name, path, ns string, policy *v1alpha1.SyncPolicy) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: path},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
				SyncPolicy:  policy,
			},
		}
	}
	big := mkApp("big", "big", bigNS, &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}})
	waved := mkApp("waved", "waves", wavesNS, nil)
	// A user's sync, as the API or `kubectl patch` requests it.
	waved.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}
	for _, a := range []*v1alpha1.Application{big, waved} {
		if err := e.client.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}

	// Open one gate every waveWait, and watch the progress recorded.
	started := time.Now()
	sawProgress := false
	for w := 1; w <= 3; w++ {
		deadline := time.Now().Add(waveWait)
		for time.Now().Before(deadline) {
			if st := e.app("waved").Status.OperationState; st != nil && st.Phase == v1alpha1.OperationRunning && st.SyncResult != nil {
				for _, rr := range st.SyncResult.Resources {
					if rr.Name == "migrate" && rr.HookPhase == v1alpha1.OperationSucceeded {
						sawProgress = true
					}
				}
			}
			time.Sleep(500 * time.Millisecond) // the wave is held for all of waveWait, sampled meanwhile
		}
		name := fmt.Sprintf("wave%d", w)
		e.eventually(name+" applied", func() string {
			_, err := e.kube.CoreV1().ConfigMaps(wavesNS).Patch(ctx, name, types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"test.capstan.io/ready":"true"}}}`), metav1.PatchOptions{FieldManager: "test"})
			if err != nil {
				return err.Error()
			}
			return ""
		})
	}

	e.eventually("the waved sync finished", func() string {
		a := e.app("waved")
		if st := a.Status.OperationState; st != nil && st.Phase.Completed() && a.Operation == nil {
			return ""
		}
		return fmt.Sprintf("operation %v, state %+v", a.Operation != nil, a.Status.OperationState)
	})
	lasted := time.Since(started)
	a := e.app("waved")
	if st := a.Status.OperationState; st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("waved sync %s: %s", st.Phase, st.Message)
	}
	if len(a.Status.History) != 1 {
		t.Errorf("waved history has %d entries, want 1", len(a.Status.History))
	}
	if !sawProgress {
		t.Error("no Running state with the completed hook was recorded while the sync ran")
	}
	if n := hookRuns.Load(); n != 1 {
		t.Errorf("the PreSync hook Job was created %d times, want once", n)
	}
	t.Logf("the waved sync lasted %s", lasted.Round(time.Second))

	e.eventually("the big app synced", func() string {
		a := e.app("big")
		if st := a.Status.OperationState; st != nil && st.Phase.Completed() && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced {
			return ""
		}
		return fmt.Sprintf("sync %s, state %v", a.Status.Sync.Status, a.Status.OperationState != nil)
	})
	a = e.app("big")
	if st := a.Status.OperationState; st.Phase != v1alpha1.OperationSucceeded || len(a.Status.History) != 1 {
		t.Errorf("big app: %s %q, %d history entries; want Succeeded and 1", st.Phase, st.Message, len(a.Status.History))
	}
	list, err := e.kube.CoreV1().ConfigMaps(bigNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(list.Items) - 1; got != bigObjects { // and kube-root-ca.crt
		t.Errorf("big app has %d ConfigMaps live, want %d", got, bigObjects)
	}
}
