package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// timingApp creates an Application of path in remote, synced into a new
// namespace, and returns that namespace.
func (e *env) timingApp(name, repoURL, path string, policy *v1alpha1.SyncPolicy, op *v1alpha1.Operation) string {
	e.t.Helper()
	dest := testCluster.NewNamespace(e.t)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: path},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}, SyncPolicy: policy},
		Operation: op,
	}
	if err := e.client.Create(context.Background(), app); err != nil {
		e.t.Fatal(err)
	}
	return dest
}

func (e *env) configMap(ns, name string) (*corev1.ConfigMap, error) {
	return e.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// waveFiles is a ConfigMap per wave, 1 to n; gated ones stay Progressing
// under gateHealth.
func waveFiles(dir string, n int, gated bool) map[string]string {
	files := map[string]string{}
	for w := 1; w <= n; w++ {
		labels := ""
		if gated && w == 1 {
			labels = "\n  labels: {gate: \"true\"}"
		}
		files[fmt.Sprintf("%s/wave%d.yaml", dir, w)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wave%d%s\n  annotations: {argocd.argoproj.io/sync-wave: \"%d\"}\n", w, labels, w)
	}
	return files
}

var userSync = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "admin"}}

// TestSyncTimeout: a sync still running when --sync-timeout passes is
// terminated and fails, saying why; the waves after it are not applied.
func TestSyncTimeout(t *testing.T) {
	c, ns := controlNamespace(t)
	if err := c.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns},
		Data: map[string]string{"resource.customizations.health.ConfigMap": gateHealth}}); err != nil {
		t.Fatal(err)
	}
	e := startWith(t, ns, func(o *Options) { o.SyncTimeout = 3 * time.Second })
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "waves", waveFiles("waves", 2, true))
	dest := e.timingApp("stuck", remote.URL, "waves", nil, userSync)
	e.eventually("the sync ended by its timeout", func() string {
		st := e.app("stuck").Status.OperationState
		if st == nil || st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message, "sync timeout (3s)") {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
	if _, err := e.configMap(dest, "wave2"); !apierrors.IsNotFound(err) {
		t.Errorf("the wave after the timeout was applied: %v", err)
	}
}

// TestSyncWaveDelay: with ARGOCD_SYNC_WAVE_DELAY each wave starts that
// long after the previous one is done.
func TestSyncWaveDelay(t *testing.T) {
	_, ns := controlNamespace(t)
	const delay = 3 * time.Second
	e := startWith(t, ns, func(o *Options) { o.SyncWaveDelay = delay })
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "waves", waveFiles("waves", 2, false))
	dest := e.timingApp("paced", remote.URL, "waves", nil, userSync)
	e.eventually("the sync done", func() string {
		if st := e.app("paced").Status.OperationState; st == nil || st.Phase != v1alpha1.OperationSucceeded {
			return fmt.Sprintf("%+v", st)
		}
		return ""
	})
	first, err1 := e.configMap(dest, "wave1")
	second, err2 := e.configMap(dest, "wave2")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// Creation times have a resolution of a second.
	if gap := second.CreationTimestamp.Sub(first.CreationTimestamp.Time); gap < delay-time.Second {
		t.Errorf("wave 2 created %s after wave 1, want at least %s", gap, delay)
	}
}

// TestSelfHealBackoffSpacesSyncs: the first self-heal sync of a revision
// runs at once; the next waits the backoff from the end of the last, and
// each is counted in the operation, as Argo CD's autoHealAttemptsCount.
func TestSelfHealBackoffSpacesSyncs(t *testing.T) {
	_, ns := controlNamespace(t)
	const wait = 5 * time.Second
	e := startWith(t, ns, func(o *Options) { o.SelfHeal = SelfHealBackoff{Initial: wait, Factor: 1} })
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "app", waveFiles("app", 1, false))
	policy := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}}
	dest := e.timingApp("healed", remote.URL, "app", policy, nil)
	e.waitSyncedHealthy("healed")
	drift := func() {
		t.Helper()
		if err := e.kube.CoreV1().ConfigMaps(dest).Delete(context.Background(), "wave1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	healed := func(attempts int64) *v1alpha1.OperationState {
		t.Helper()
		var st *v1alpha1.OperationState
		e.eventually(fmt.Sprintf("self-heal sync %d", attempts), func() string {
			st = e.app("healed").Status.OperationState
			if _, err := e.configMap(dest, "wave1"); err != nil {
				return err.Error()
			}
			if st == nil || st.Phase != v1alpha1.OperationSucceeded || st.Operation.Sync == nil || st.Operation.Sync.SelfHealAttemptsCount != attempts {
				return fmt.Sprintf("%+v", st)
			}
			return ""
		})
		return st
	}
	drift()
	first := healed(1)
	drift()
	healed(2)
	recreated, err := e.configMap(dest, "wave1")
	if err != nil {
		t.Fatal(err)
	}
	// Times are stored to the second.
	if gap := recreated.CreationTimestamp.Sub(first.FinishedAt.Time); gap < wait-time.Second {
		t.Errorf("the second self-heal sync came %s after the first ended, want at least %s", gap, wait)
	}
}
