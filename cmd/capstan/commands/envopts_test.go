package commands

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestEnvironmentReachesServer: with ARGOCD_SERVER, ARGOCD_AUTH_TOKEN and
// ARGOCD_OPTS set, as a CI job sets them, commands need no login and no
// flags; a flag still wins over its variable, and a bad ARGOCD_OPTS is an
// error that names it.
func TestEnvironmentReachesServer(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "argocd-cm"}, Data: map[string]string{"accounts.ci": "apiKey"}}
	if err := testobj.Put(context.Background(), f.c, cm); err != nil {
		t.Fatal(err)
	}
	f.login()
	token := strings.TrimSpace(f.expect(0, "account", "generate-token", "--account", "ci"))
	f.config = t.TempDir() + "/empty-config" // no context from here on

	t.Setenv("ARGOCD_SERVER", f.addr)
	t.Setenv("ARGOCD_AUTH_TOKEN", token)
	t.Setenv("ARGOCD_OPTS", "--insecure")
	if out := f.expect(0, "account", "get-user-info"); !strings.Contains(out, "ci") {
		t.Errorf("get-user-info from the environment:\n%s", out)
	}
	if _, _, stderr := f.run("account", "get-user-info", "--server", "127.0.0.1:1"); !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("--server does not win over %s: %q", "ARGOCD_SERVER", stderr)
	}
	t.Setenv("ARGOCD_OPTS", "--insecure --server 127.0.0.1:1")
	if _, _, stderr := f.run("account", "get-user-info"); !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("--server from %s does not win over %s: %q", "ARGOCD_OPTS", "ARGOCD_SERVER", stderr)
	}
	t.Setenv("ARGOCD_OPTS", "insecure")
	if _, _, stderr := f.run("app", "list"); !strings.Contains(stderr, "ARGOCD_OPTS") {
		t.Errorf("a bad %s: %q", "ARGOCD_OPTS", stderr)
	}
}
