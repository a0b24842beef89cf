package commands

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/loopback"
)

// TestRundex runs argocd-dex rundex against argocd-cm: Dex comes up over
// TLS (a self-signed certificate, none being mounted) with the issuer of
// argocd-cm's url, and is restarted with the new one when url changes.
func TestRundex(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	c, err := kube.NewClient(kubeCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := kubeCluster.NewNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: ns}, Data: map[string]string{
		"url": "https://cd.example.com", "dex.config": "logger: {level: error}\nconnectors:\n- {type: mockCallback, id: mock, name: Mock}\n"}}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: settings.ServerSecretName, Namespace: ns},
		Data: map[string][]byte{"server.secretkey": []byte("k3y")}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	host := loopback.Address()
	t.Setenv("KUBECONFIG", kubeCluster.KubeconfigPath)
	t.Setenv("ARGOCD_APP_CONFIG_PATH", t.TempDir()) // no argocd-dex-server-tls mounted
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		root := NewRoot()
		root.SetArgs([]string{"dex", "rundex", "--namespace", ns, "--address", host, "--dex-binary", dexserver.Binary(t)})
		root.SetErr(&bytes.Buffer{})
		done <- root.ExecuteContext(runCtx)
	}()

	https := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	waitIssuer := func(want string) {
		t.Helper()
		eventually.String(t, "Dex's issuer "+want, func() string {
			resp, err := https.Get("https://" + host + ":5556" + settings.DexPath + "/.well-known/openid-configuration")
			if err != nil {
				return err.Error()
			}
			var doc struct{ Issuer string }
			_ = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			if doc.Issuer != want {
				return fmt.Sprintf("issuer %q", doc.Issuer)
			}
			return ""
		})
	}
	waitIssuer("https://cd.example.com/api/dex")

	cm.Data["url"] = "https://cd2.example.com"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitIssuer("https://cd2.example.com/api/dex")

	cancel()
	if err := <-done; err != nil {
		t.Errorf("rundex exited with %v", err)
	}
	if _, err := https.Get("https://" + host + ":5556/"); err == nil {
		t.Error("Dex still answers after rundex stopped")
	}
}
