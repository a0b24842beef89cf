package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestOIDCInsecureSkipVerify: an OpenID provider whose certificate no
// authority signed is refused, unless argocd-cm's
// oidc.tls.insecure.skip.verify is "true", as in Argo CD.
func TestOIDCInsecureSkipVerify(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, true)
	var issuer string
	provider := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize",
			"token_endpoint": issuer + "/token", "jwks_uri": issuer + "/keys", "id_token_signing_alg_values_supported": []string{"RS256"}})
	}))
	t.Cleanup(provider.Close)
	issuer = provider.URL
	browser := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, skip := range []string{"false", "true"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{"url": f.base,
			"oidc.config": "name: Corp\nissuer: " + issuer + "\nclientID: capstan\nclientSecret: s\n", "oidc.tls.insecure.skip.verify": skip}}
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
		resp, err := browser.Get(f.base + "/auth/login?return_url=/applications")
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		location := resp.Header.Get("Location")
		switch {
		case skip == "false" && (resp.StatusCode < 400 || !strings.Contains(body, "certificate")):
			t.Errorf("an unverified provider's certificate was accepted: %d %s", resp.StatusCode, body)
		case skip == "true" && !strings.HasPrefix(location, issuer+"/authorize"):
			t.Errorf("with oidc.tls.insecure.skip.verify: %d %q %s", resp.StatusCode, location, body)
		}
	}
}
