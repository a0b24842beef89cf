package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestSelfHealBackoff: the waits of Argo CD's defaults (2 s, factor 3,
// cap 5 min), its fixed timeout, and the zero value's none.
func TestSelfHealBackoff(t *testing.T) {
	argo := SelfHealBackoff{Initial: 2 * time.Second, Factor: 3, Cap: 5 * time.Minute}
	for _, tc := range []struct {
		b    SelfHealBackoff
		n    int64
		want time.Duration
	}{
		{argo, 0, 0},
		{argo, 1, 2 * time.Second},
		{argo, 2, 6 * time.Second},
		{argo, 3, 18 * time.Second},
		{argo, 5, 162 * time.Second},
		{argo, 6, 5 * time.Minute},
		{argo, 60, 5 * time.Minute},
		{SelfHealBackoff{Fixed: 10 * time.Second}, 0, 0},
		{SelfHealBackoff{Fixed: 10 * time.Second}, 4, 10 * time.Second},
		{SelfHealBackoff{}, 9, 0},
	} {
		if got := tc.b.delay(tc.n); got != tc.want {
			t.Errorf("%+v after %d: %s, want %s", tc.b, tc.n, got, tc.want)
		}
	}
	now := time.Now()
	st := &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{SelfHealAttemptsCount: 2}},
		FinishedAt: &metav1.Time{Time: now.Add(-4 * time.Second)}}
	if got := argo.remaining(st, now); got != 2*time.Second {
		t.Errorf("remaining 4 s after the second self-heal: %s, want 2s", got)
	}
	if got := argo.remaining(nil, now); got != 0 {
		t.Errorf("no operation yet: %s", got)
	}
}
