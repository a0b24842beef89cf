package settings

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestProxyExtensions(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ServerSecretName, Namespace: "argocd"},
		Data: map[string][]byte{"ext.token": []byte("s3cret")}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	a := &ArgoCD{Data: map[string]string{
		"extension.config": `
extensions:
- name: httpbin
  backend:
    connectionTimeout: 5s
    services:
    - url: http://httpbin.example.com
      cluster: {name: in-cluster}
      headers:
      - {name: Authorization, value: $ext.token}
    - url: http://httpbin.remote.example.com
      cluster: {server: https://remote.example.com}
`,
		"extension.config.metrics": "services:\n- url: http://metrics.example.com\n",
	}}
	exts, err := a.ProxyExtensions(context.Background(), c, "argocd")
	if err != nil {
		t.Fatal(err)
	}
	if len(exts) != 2 || exts[0].Name != "httpbin" || exts[1].Name != "metrics" {
		t.Fatalf("extensions %+v", exts)
	}
	b := exts[0].Backend
	if b.ConnectionTimeout.Duration != 5*time.Second || b.KeepAlive != DefaultExtensionKeepAlive || b.MaxIdleConnections != DefaultExtensionMaxIdleConnections {
		t.Errorf("backend settings %+v: want 5s and Argo CD's defaults", b)
	}
	if got := b.Services[0].Headers[0].Value; got != "s3cret" {
		t.Errorf("$ext.token resolved to %q", got)
	}

	for raw, want := range map[string]string{
		"services: []":         "no backend service",
		"services:\n- url: ''": "has no url",
		"services:\n- url: http://a\n- url: http://b":        "must name its cluster",
		"services:\n- url: http://a\n  cluster: {}":          "needs a name or a server",
		"services:\n- url: http://a\n  headers: [{name: X}]": "needs a name and a value",
		"services: [": "extension.config.x",
		"service: []": "unknown field",
	} {
		_, err := (&ArgoCD{Data: map[string]string{"extension.config.x": raw}}).ProxyExtensions(context.Background(), c, "argocd")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", raw, err, want)
		}
	}
	_, err = (&ArgoCD{Data: map[string]string{"extension.config.bad/name": "services:\n- url: http://a\n"}}).ProxyExtensions(context.Background(), c, "argocd")
	if err == nil || !strings.Contains(err.Error(), "only letters") {
		t.Errorf("an unsafe name: %v", err)
	}
	twice := &ArgoCD{Data: map[string]string{"extension.config": "extensions:\n- name: m\n  backend: {services: [{url: http://a}]}\n",
		"extension.config.m": "services:\n- url: http://a\n"}}
	if _, err := twice.ProxyExtensions(context.Background(), c, "argocd"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("an extension configured twice: %v", err)
	}
}
