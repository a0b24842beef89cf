package testobj

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestPutCreatesOrReplaces(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cm"}, Data: data}
	}
	for _, want := range []map[string]string{{"url": "https://a.example.com"}, {"url": "https://b.example.com"}} {
		if err := Put(ctx, c, cm(want)); err != nil {
			t.Fatal(err)
		}
		got := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "argocd", Name: "argocd-cm"}, got); err != nil {
			t.Fatal(err)
		}
		if got.Data["url"] != want["url"] {
			t.Errorf("data = %v, want %v", got.Data, want)
		}
	}
}
