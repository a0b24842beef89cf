package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestAccountSessionToken: after login, account session-token prints the
// context's token, which the API takes as ARGOCD_AUTH_TOKEN, and -o json
// names its user, issuer and expiry as Argo CD's command does.
func TestAccountSessionToken(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	if _, _, stderr := f.run("account", "session-token"); !strings.Contains(stderr, "capstan login") {
		t.Errorf("session-token before any login: %q", stderr)
	}
	f.login()
	token := strings.TrimSpace(f.expect(0, "account", "session-token"))
	var info map[string]any
	if err := json.Unmarshal([]byte(f.expect(0, "account", "session-token", "-o", "json")), &info); err != nil {
		t.Fatal(err)
	}
	if info["token"] != token || info["type"] != "local" || info["username"] != "admin" || info["issuer"] != "argocd" || info["expires_at"] == nil {
		t.Errorf("session-token -o json: %v", info)
	}
	f.config = t.TempDir() + "/empty-config"
	t.Setenv("ARGOCD_SERVER", f.addr)
	t.Setenv("ARGOCD_AUTH_TOKEN", token)
	t.Setenv("ARGOCD_OPTS", "--insecure")
	if out := f.expect(0, "account", "get-user-info"); !strings.Contains(out, "admin") {
		t.Errorf("the printed token does not reach the API:\n%s", out)
	}
}
