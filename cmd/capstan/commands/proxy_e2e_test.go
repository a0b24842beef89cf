package commands

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestBehindAPathProxy reaches Capstan through a reverse proxy that
// serves it under /argocd and lets only requests with a secret header
// through, with Capstan's CLI and Argo CD's: --grpc-web-root-path and
// --header work as in Argo CD.
func TestBehindAPathProxy(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	target, _ := url.Parse("https://" + f.addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec: the test server's own certificate
	proxy.FlushInterval = -1
	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Proxy-Auth") != "secret" {
			http.Error(w, "no proxy credentials", http.StatusForbidden)
			return
		}
		http.StripPrefix("/argocd", proxy).ServeHTTP(w, r)
	}))
	front.EnableHTTP2 = true
	front.StartTLS()
	defer front.Close()
	addr := strings.TrimPrefix(front.URL, "https://")
	via := []string{"--insecure", "--grpc-web-root-path", "argocd", "--header", "X-Proxy-Auth: secret"}

	f.expect(1, append([]string{"login", addr, "--username", "admin", "--password", f.password}, via[:3]...)...) // no header: refused by the proxy
	f.expect(0, append([]string{"login", addr, "--username", "admin", "--password", f.password}, via...)...)
	if out := f.expect(0, append([]string{"account", "get-user-info"}, via[3:]...)...); !strings.Contains(out, "Username: admin") {
		t.Errorf("Capstan's CLI through the proxy:\n%s", out)
	}

	argocd := argocdcli.New(t)
	argocd.Expect(0, append([]string{"login", addr, "--username", "admin", "--password", f.password}, via...)...)
	if out := argocd.Expect(0, "account", "get-user-info", "--header", "X-Proxy-Auth: secret"); !strings.Contains(out, "admin") {
		t.Errorf("Argo CD's CLI through the proxy:\n%s", out)
	}
}
