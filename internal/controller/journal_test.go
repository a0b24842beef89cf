package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSyncLeftInJournalIsRecordedOnce starts a controller whose journal
// holds two automated syncs a stopped controller left: one it stopped
// before recording (its objects may or may not be applied), one recorded
// just before it stopped. The first is run and recorded with its start
// time; the second is not run again; the journal ends empty.
func TestSyncLeftInJournalIsRecordedOnce(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	c, ns := controlNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"unrecorded/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrecorded}\n",
		"recorded/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: recorded}\n",
	})
	started := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: true}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}
	var entries []journalEntry
	for _, name := range []string{"unrecorded", "recorded"} {
		// No automated policy: only the journal can make them sync.
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: name},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns}},
		}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		if name == "recorded" {
			finished := metav1.NewTime(started.Add(time.Second))
			app.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationSucceeded, StartedAt: started, FinishedAt: &finished}
			app.Status.History = []v1alpha1.RevisionHistory{{ID: 0, Revision: "abc", DeployedAt: finished, InitiatedBy: op.InitiatedBy}}
			if err := c.Update(ctx, app); err != nil {
				t.Fatal(err)
			}
		}
		entries = append(entries, journalEntry{Namespace: ns, Name: name, Operation: op, StartedAt: started})
	}
	data, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	journalName := "capstan-application-controller-syncs"
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: journalName, Namespace: ns}, Data: map[string]string{journalKey: string(data)}}); err != nil {
		t.Fatal(err)
	}

	e := startIn(t, ns)
	e.eventually("the unrecorded sync recorded", func() string {
		a := e.app("unrecorded")
		st := a.Status.OperationState
		if st != nil && st.Phase == v1alpha1.OperationSucceeded && len(a.Status.History) == 1 {
			if !st.StartedAt.Equal(&started) || !st.Operation.InitiatedBy.Automated {
				t.Fatalf("recorded as started at %s by %+v, want the journal's %s, automated", st.StartedAt, st.Operation.InitiatedBy, started)
			}
			return ""
		}
		return fmt.Sprintf("%+v, %d history entries", st, len(a.Status.History))
	})
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "unrecorded", metav1.GetOptions{}); err != nil {
		t.Errorf("the journal's sync did not apply: %v", err)
	}
	e.eventually("the journal emptied", func() string {
		cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, journalName, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		var left []journalEntry
		if err := json.Unmarshal([]byte(cm.Data[journalKey]), &left); err != nil || len(left) > 0 {
			return fmt.Sprintf("%d entries left (%v)", len(left), err)
		}
		return ""
	})
	if a := e.app("recorded"); len(a.Status.History) != 1 || a.Status.OperationState.StartedAt.Unix() != started.Unix() {
		t.Errorf("the recorded sync ran again: %d history entries, last started %s", len(a.Status.History), a.Status.OperationState.StartedAt)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "recorded", metav1.GetOptions{}); err == nil {
		t.Error("the recorded sync was applied again")
	}
}
