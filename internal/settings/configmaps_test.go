package settings

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestEnsureConfigMaps creates the ConfigMaps an Argo CD install ships when
// they are missing and leaves an existing one's data alone.
func TestEnsureConfigMaps(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	mine := &corev1.ConfigMap{Data: map[string]string{"url": "https://cd.example.com"}}
	mine.Namespace, mine.Name = ns, CMName
	if err := c.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := EnsureConfigMaps(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range InstallConfigMaps {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			t.Errorf("ConfigMap %s: %v", name, err)
			continue
		}
		if name == CMName && cm.Data["url"] != "https://cd.example.com" {
			t.Errorf("argocd-cm data %v; the user's settings were lost", cm.Data)
		}
		if name != CMName && (len(cm.Data) != 0 || cm.Labels["app.kubernetes.io/part-of"] != "argocd") {
			t.Errorf("ConfigMap %s: data %v labels %v; want empty, part of argocd", name, cm.Data, cm.Labels)
		}
	}
}
