package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/internal/settings"
)

// DexServer is where the bundled Dex runs (argocd-dex-server), reached
// when argocd-cm's dex.config makes it the SSO provider.
type DexServer struct {
	// Address is host:port. Default: argocd-dex-server:5556.
	Address string
	// Plaintext reaches Dex over HTTP (a Dex run with --disable-tls).
	// Default: HTTPS.
	Plaintext bool
	// RootCAs, when set, verify Dex's certificate (strict TLS). Default:
	// not verified, as Argo CD's default.
	RootCAs *x509.CertPool
}

// base is Dex's URL as the API server reaches it.
func (d DexServer) base() *url.URL {
	addr := d.Address
	if addr == "" {
		addr = "argocd-dex-server:5556"
	}
	scheme := "https"
	if d.Plaintext {
		scheme = "http"
	}
	return &url.URL{Scheme: scheme, Host: addr}
}

// transport carries requests to Dex.
func (d DexServer) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if !d.Plaintext {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: d.RootCAs, InsecureSkipVerify: d.RootCAs == nil} //nolint:gosec // Argo CD's default, see DexServer
	}
	return t
}

// dexProxy answers under /api/dex/ by passing the request to Dex, so
// browsers reach Dex through the API server's URL, its issuer. Without
// dex.config there is nothing there.
func (s *Server) dexProxy() http.Handler {
	target := s.opts.Dex.base()
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.SetXForwarded() },
		Transport: s.opts.Dex.transport(),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conf, err := settings.LoadSSO(r.Context(), s.opts.Client, s.opts.Namespace)
		if err != nil {
			s.reply(w, nil, err)
			return
		}
		if !conf.Dex {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// dexClient is the HTTP client the API server talks OIDC with when the
// provider is the bundled Dex: requests for the issuer (the API server's
// own external URL) go to Dex directly.
func (s *Server) dexClient(issuer string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &issuerRewrite{issuer: strings.TrimSuffix(issuer, "/"), dex: s.opts.Dex.base(), next: s.opts.Dex.transport()}}
}

// issuerRewrite sends requests under issuer to the same path on dex.
type issuerRewrite struct {
	issuer string
	dex    *url.URL
	next   http.RoundTripper
}

func (t *issuerRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	u := r.URL.String()
	if !strings.HasPrefix(u, t.issuer) {
		return nil, fmt.Errorf("OIDC request to %s, outside Dex's issuer %s", r.URL.Redacted(), t.issuer)
	}
	issuerURL, err := url.Parse(t.issuer)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = t.dex.Scheme, t.dex.Host
	r.Host = issuerURL.Host
	return t.next.RoundTrip(r)
}
