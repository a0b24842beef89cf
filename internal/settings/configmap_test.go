package settings

import (
	"context"
	"testing"

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
