package server

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/loopback"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestSSOThroughBundledDex: with dex.config instead of oidc.config, Dex
// runs with the configuration Capstan makes of it (as argocd-dex rundex
// does) and users log in through it at the API server's own URL: the
// browser reaches Dex through the /api/dex proxy, the server redeems the
// code with Dex directly, and Dex's groups map to roles.
func TestSSOThroughBundledDex(t *testing.T) {
	t.Parallel()
	localcluster.
		// Dex listens on Argo CD's ports, on an address of its own.
		Need(t)

	dexHost := loopback.Address()
	f := startWith(t, Options{Insecure: true, Dex: DexServer{Address: dexHost + ":5556", Plaintext: true}})
	ctx := context.Background()
	if code := f.call("GET", "/api/dex/.well-known/openid-configuration", "", "", nil); code != http.StatusNotFound {
		t.Errorf("/api/dex without dex.config: %d, want 404", code)
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{"url": f.base,
			// Two connectors: dex.auth.connectorId picks one, or Dex would ask.
			"dex.config":           "logger: {level: error}\nconnectors:\n- {type: mockCallback, id: mock, name: Mock}\n- {type: mockCallback, id: other, name: Other}\n",
			"dex.auth.connectorId": "mock"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{"policy.csv": "g, " + dexserver.Group + ", role:admin\n"}},
	} {
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
	}
	config, err := settings.DexConfig(ctx, f.c, f.ns, settings.DexServe{Address: dexHost})
	if err != nil {
		t.Fatal(err)
	}
	dexserver.Serve(t, config, "http://"+dexHost+":5556"+settings.DexPath)

	var got settingsResponse
	issuer := f.base + settings.DexPath
	if code := f.call("GET", "/api/v1/settings", "", "", &got); code != 200 || got.OIDCConfig == nil || got.OIDCConfig.Issuer != issuer ||
		got.OIDCConfig.ClientID != settings.DexClientID || got.OIDCConfig.CLIClientID != settings.DexCLIClientID {
		t.Fatalf("settings with dex.config: %d %+v", code, got.OIDCConfig)
	}
	token, visited := f.browserLogin()
	if !strings.Contains(strings.Join(visited, " "), f.base+settings.DexPath+"/auth") {
		t.Errorf("the browser did not reach Dex through the API server: %v", visited)
	}
	if !strings.Contains(strings.Join(visited, " "), "connector_id=mock") {
		t.Errorf("the login did not name dex.auth.connectorId's connector: %v", visited)
	}
	var info apiwire.UserInfo
	if f.call("GET", "/api/v1/session/userinfo", "", token, &info); !info.LoggedIn || info.Username != dexserver.Email || info.Issuer != issuer {
		t.Errorf("userinfo after logging in through Dex: %+v", info)
	}
	if code := f.call("POST", "/api/v1/projects", `{"project":{"metadata":{"name":"dex-made"}}}`, token, nil); code != 200 {
		t.Errorf("the Dex group's admin role: create project %d, want 200", code)
	}
}

// TestDexStrictTLS: with server.dex.server.strict.tls (RootCAs set), Dex
// is reached only when its certificate chains to them; without, its
// certificate is not checked, as in Argo CD.
func TestDexStrictTLS(t *testing.T) {
	dex := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("dex")) }))
	defer dex.Close()
	trusted := x509.NewCertPool()
	trusted.AddCert(dex.Certificate())
	otherPEM, _, err := certs.SelfSigned("argocd-dex-server", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	other := x509.NewCertPool()
	other.AppendCertsFromPEM(otherPEM)
	for _, tc := range []struct {
		name  string
		roots *x509.CertPool
		ok    bool
	}{
		{"not strict", nil, true},
		{"strict, Dex's certificate trusted", trusted, true},
		{"strict, another certificate trusted", other, false},
	} {
		d := DexServer{Address: strings.TrimPrefix(dex.URL, "https://"), RootCAs: tc.roots}
		resp, err := (&http.Client{Transport: d.transport()}).Get(d.base().String() + "/api/dex/keys")
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
