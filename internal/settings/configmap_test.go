package settings

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLoadArgoCD(t *testing.T) {
	c, ns := setup(t)
	ctx := context.Background()
	absent, err := LoadArgoCD(ctx, c, ns)
	if err != nil || absent.Version != "" || len(absent.Data) != 0 || absent.TrackingMethod() != "" {
		t.Fatalf("without argocd-cm: %v %+v", err, absent)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: CMName}, Data: map[string]string{"application.resourceTrackingMethod": "label"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got, err := LoadArgoCD(ctx, c, ns)
	if err != nil || got.Version == "" || got.TrackingMethod() != "label" {
		t.Fatalf("with argocd-cm: %v %+v", err, got)
	}
}

func TestSessionDuration(t *testing.T) {
	for value, want := range map[string]time.Duration{"": DefaultSessionDuration, "1h": time.Hour, "90m": 90 * time.Minute, "soon": DefaultSessionDuration, "-1h": DefaultSessionDuration} {
		got, err := (&ArgoCD{Data: map[string]string{SessionDurationKey: value}}).SessionDuration()
		if got != want || (err != nil) != (value == "soon" || value == "-1h") {
			t.Errorf("%q: %s, %v; want %s", value, got, err, want)
		}
	}
}
