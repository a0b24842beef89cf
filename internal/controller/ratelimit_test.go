package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestRetriesStayFrequent: however often an Application's reconcile has
// failed (every try of a minute-long API server outage), its next try is
// at most maxRetryDelay away.
func TestRetriesStayFrequent(t *testing.T) {
	l := retryLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "argocd", Name: "app"}}
	for range 50 {
		if d := l.When(req); d > maxRetryDelay {
			t.Fatalf("a retry %s away, over %s", d, maxRetryDelay)
		}
	}
}
