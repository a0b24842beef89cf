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

func TestParseEnvOpts(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", want: map[string]string{}},
		{in: "--grpc-web", want: map[string]string{"grpc-web": "true"}},
		{in: "--grpc-web --server argocd.example.com:443 --insecure", want: map[string]string{"grpc-web": "true", "server": "argocd.example.com:443", "insecure": "true"}},
		{in: "--header 'X-Team: a b' --plaintext=false", want: map[string]string{"header": "X-Team: a b", "plaintext": "false"}},
		{in: "server", wantErr: `"server" is not a --flag`},
		{in: "--header 'unclosed", wantErr: "ARGOCD_OPTS"},
		{in: "--x " + strings.Repeat("y", maxEnvOpts), wantErr: "longer than"},
	} {
		got, err := parseEnvOpts(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}

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

	t.Setenv(envServer, f.addr)
	t.Setenv(envAuthToken, token)
	t.Setenv(envOpts, "--insecure")
	if out := f.expect(0, "account", "get-user-info"); !strings.Contains(out, "ci") {
		t.Errorf("get-user-info from the environment:\n%s", out)
	}
	if _, _, stderr := f.run("account", "get-user-info", "--server", "127.0.0.1:1"); !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("--server does not win over %s: %q", envServer, stderr)
	}
	t.Setenv(envOpts, "--insecure --server 127.0.0.1:1")
	if _, _, stderr := f.run("account", "get-user-info"); !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("--server from %s does not win over %s: %q", envOpts, envServer, stderr)
	}
	t.Setenv(envOpts, "insecure")
	if _, _, stderr := f.run("app", "list"); !strings.Contains(stderr, envOpts) {
		t.Errorf("a bad %s: %q", envOpts, stderr)
	}
}
