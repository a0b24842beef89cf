package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/dexserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestSSOLoginThroughDex logs in through a real OpenID provider (Dex) with
// the authorization-code flow and PKCE, and checks that the group in the
// ID token maps to a role through argocd-rbac-cm.
func TestSSOLoginThroughDex(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	ctx := context.Background()
	dex := f.withDex()

	var settingsResp settingsResponse
	if code := f.call("GET", "/api/v1/settings", "", "", &settingsResp); code != 200 || settingsResp.OIDCConfig == nil || settingsResp.OIDCConfig.Issuer != dex.Issuer {
		t.Fatalf("settings: %d %+v", code, settingsResp)
	}

	token, visited := f.browserLogin()
	if !strings.Contains(strings.Join(visited, " "), "code_challenge_method=S256") {
		t.Fatalf("login without PKCE: %v", visited)
	}
	var info apiwire.UserInfo
	if f.call("GET", "/api/v1/session/userinfo", "", token, &info); !info.LoggedIn || info.Username != dexserver.Email || info.Issuer != dex.Issuer ||
		len(info.Groups) != 1 || info.Groups[0] != dexserver.Group {
		t.Errorf("userinfo after SSO: %+v", info)
	}
	if code := f.call("POST", "/api/v1/projects", `{"project":{"metadata":{"name":"sso-made"}}}`, token, nil); code != 200 {
		t.Errorf("the group's admin role: create project %d, want 200", code)
	}

	// Without the group's mapping the same user is refused.
	rbacCM := &corev1.ConfigMap{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "argocd-rbac-cm"}, rbacCM); err != nil {
		t.Fatal(err)
	}
	rbacCM.Data["policy.csv"] = "g, other-group, role:admin\n"
	if err := f.c.Update(ctx, rbacCM); err != nil {
		t.Fatal(err)
	}
	if code := f.call("POST", "/api/v1/projects", `{"project":{"metadata":{"name":"sso-denied"}}}`, token, nil); code != 403 {
		t.Errorf("without the group mapping: create project %d, want 403", code)
	}

	// A token that claims Dex as issuer but is not signed by it is refused.
	forged, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": dex.Issuer, "sub": "x", "aud": "capstan",
		"groups": []string{dexserver.Group}, "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("guess"))
	if code := f.call("GET", "/api/v1/applications", "", forged, nil); code != 401 {
		t.Errorf("a forged ID token: %d, want 401", code)
	}
	// A login answer without the state cookie is refused.
	if code := f.call("GET", "/auth/callback?code=x&state=y", "", "", nil); code != 400 {
		t.Errorf("a callback without a login in progress: %d, want 400", code)
	}
}

// TestSSOLoginThroughAdditionalURL: a browser that reaches the server at
// one of argocd-cm's additionalUrls is sent back there by the provider,
// and its return URL may be under that address, as in Argo CD; Dex's
// generated configuration lists that callback too.
func TestSSOLoginThroughAdditionalURL(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	other := strings.Replace(f.base, "127.0.0.1", "localhost", 1)
	if other == f.base {
		t.Skipf("the server's address %s has no second name", f.base)
	}
	f.withDexCallbacks(other + "/auth/callback")
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: settings.CMName}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["additionalUrls"] = "- " + other + "\n"
	if err := f.c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	token, visited := f.browserLoginAt(other)
	if !strings.Contains(strings.Join(visited, " "), url.QueryEscape(other+"/auth/callback")) {
		t.Errorf("the provider was not asked to come back through %s: %v", other, visited)
	}
	var info apiwire.UserInfo
	if f.call("GET", "/api/v1/session/userinfo", "", token, &info); !info.LoggedIn {
		t.Errorf("no session after the login through %s: %+v", other, info)
	}
	// A return URL under the additional address is kept; one elsewhere is not.
	p, err := f.srv.sso(context.Background())
	if err != nil || p == nil {
		t.Fatal(p, err)
	}
	r := httptest.NewRequest("GET", other+"/auth/login", nil)
	if got := safeReturnURL(other+"/applications/x", p.baseURL(r)); got != other+"/applications/x" {
		t.Errorf("a return URL under the additional address became %q", got)
	}
	if got := safeReturnURL("https://evil.example.com/x", p.baseURL(r)); got != "/" {
		t.Errorf("a foreign return URL became %q", got)
	}
	if got := p.baseURL(httptest.NewRequest("GET", "http://evil.example.com/auth/login", nil)); got != f.base {
		t.Errorf("a request naming an unknown host is answered under %q, want url %q", got, f.base)
	}
}

// browserLogin logs in as a browser would: it follows the redirects from
// /auth/login through the identity provider and back, keeping cookies,
// and returns the session cookie's token and the URLs visited.
// withDex runs Dex and makes it the API server's OpenID provider, as
// oidc.config in argocd-cm (its client secret a reference into
// argocd-secret), with Dex's group mapped to role:admin.
func (f *fixture) withDex() *dexserver.Dex {
	f.t.Helper()
	return f.withDexCallbacks()
}

// withDexCallbacks is withDex with more callbacks Dex accepts for the
// server's client.
func (f *fixture) withDexCallbacks(more ...string) *dexserver.Dex {
	t := f.t
	t.Helper()
	ctx := context.Background()
	dex := dexserver.Start(t, dexserver.Client{ID: "capstan", Secret: "dex-client-secret", RedirectURIs: append([]string{f.base + "/auth/callback"}, more...)})

	// The client secret is a reference into argocd-secret, as Argo CD's.
	sec := &corev1.Secret{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: settings.ServerSecretName}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["oidc.dex.clientSecret"] = []byte("dex-client-secret")
	if err := f.c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	oidcConfig := fmt.Sprintf("name: Dex\nissuer: %s\nclientID: capstan\nclientSecret: $oidc.dex.clientSecret\nrequestedScopes: [openid, profile, email, groups]\n"+
		"requestedIDTokenClaims: {groups: {essential: true}}\n", dex.Issuer)
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{"url": f.base, "oidc.config": oidcConfig}},
		{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{"policy.csv": "g, " + dexserver.Group + ", role:admin\n"}},
	} {
		if err := testobj.Put(ctx, f.c, cm); err != nil {
			t.Fatal(err)
		}
	}

	return dex
}

func (f *fixture) browserLogin() (string, []string) {
	f.t.Helper()
	return f.browserLoginAt(f.base)
}

// browserLoginAt is browserLogin through the server's address at.
func (f *fixture) browserLoginAt(at string) (string, []string) {
	f.t.Helper()
	jar, _ := cookiejar.New(nil)
	var visited []string
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		visited = append(visited, req.URL.String())
		if req.URL.Path == "/applications" {
			return http.ErrUseLastResponse // back home: the login is done
		}
		return nil
	}}
	resp, err := browser.Get(at + "/auth/login?return_url=/applications")
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("login ended with %d after %v", resp.StatusCode, visited)
	}
	base, _ := url.Parse(at)
	for _, c := range jar.Cookies(base) {
		if c.Name == tokenCookie {
			return c.Value, visited
		}
	}
	f.t.Fatalf("no session cookie after the SSO login through %v", visited)
	return "", nil
}
