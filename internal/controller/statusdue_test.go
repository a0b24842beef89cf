package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestStatusDue: a status is written when it changed or when reconciledAt
// is half a resync old, and deciding leaves both Applications as they were.
func TestStatusDue(t *testing.T) {
	r := &reconciler{opts: Options{Resync: 10 * time.Minute}}
	fresh, stale := metav1.Now(), metav1.NewTime(time.Now().Add(-6*time.Minute))
	app := func(at *metav1.Time, sync v1alpha1.SyncStatusCode, resources ...string) *v1alpha1.Application {
		a := &v1alpha1.Application{}
		a.Status.ReconciledAt, a.Status.Sync.Status = at, sync
		for _, name := range resources {
			a.Status.Resources = append(a.Status.Resources, v1alpha1.ResourceStatus{Kind: "ConfigMap", Name: name})
		}
		return a
	}
	later := metav1.NewTime(fresh.Add(time.Second))
	for _, tc := range []struct {
		name       string
		orig, next *v1alpha1.Application
		want       bool
	}{
		{"only reconciledAt differs", app(&fresh, v1alpha1.SyncStatusCodeSynced, "a"), app(&later, v1alpha1.SyncStatusCodeSynced, "a"), false},
		{"the sync status changed", app(&fresh, v1alpha1.SyncStatusCodeSynced, "a"), app(&later, v1alpha1.SyncStatusCodeOutOfSync, "a"), true},
		{"a resource changed", app(&fresh, v1alpha1.SyncStatusCodeSynced, "a"), app(&later, v1alpha1.SyncStatusCodeSynced, "b"), true},
		{"reconciledAt is half a resync old", app(&stale, v1alpha1.SyncStatusCodeSynced, "a"), app(&later, v1alpha1.SyncStatusCodeSynced, "a"), true},
		{"never reconciled", app(nil, v1alpha1.SyncStatusCodeSynced), app(&later, v1alpha1.SyncStatusCodeSynced), true},
	} {
		origAt, nextAt := tc.orig.Status.ReconciledAt, tc.next.Status.ReconciledAt
		if got := r.statusDue(tc.orig, tc.next); got != tc.want {
			t.Errorf("%s: statusDue = %v, want %v", tc.name, got, tc.want)
		}
		if tc.orig.Status.ReconciledAt != origAt || tc.next.Status.ReconciledAt != nextAt {
			t.Errorf("%s: statusDue changed an Application's reconciledAt", tc.name)
		}
	}
}
