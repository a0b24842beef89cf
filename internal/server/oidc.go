package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"

	"github.com/capstan-cd/capstan/internal/session"
	"github.com/capstan-cd/capstan/internal/settings"
)

// stateCookie carries the login's state, PKCE verifier and return URL
// through the provider, signed so it cannot be forged.
const stateCookie = "oauthstate"

// ssoProvider is the OIDC provider of one oidc.config, discovered once.
type ssoProvider struct {
	key      string // the configuration it was built from
	cfg      *settings.OIDCConfig
	sso      *settings.SSO // url and additionalUrls
	provider *oidc.Provider
	client   *http.Client
}

// ssoCache holds the provider for the current oidc.config.
type ssoCache struct {
	mu sync.Mutex
	p  *ssoProvider
}

// sso returns the configured OIDC provider, or nil when there is none.
func (s *Server) sso(ctx context.Context) (*ssoProvider, error) {
	conf, err := settings.LoadSSO(ctx, s.opts.Client, s.opts.Namespace)
	if err != nil || conf.OIDC == nil {
		return nil, err
	}
	keyData, _ := json.Marshal(conf)
	key := string(keyData)
	s.ssoCache.mu.Lock()
	defer s.ssoCache.mu.Unlock()
	if p := s.ssoCache.p; p != nil && p.key == key {
		return p, nil
	}
	httpClient := &http.Client{Timeout: 30 * time.Second}
	if conf.Dex {
		httpClient = s.dexClient(conf.OIDC.Issuer)
	} else if conf.OIDC.RootCA != "" || conf.InsecureSkipVerify {
		tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: conf.InsecureSkipVerify} //nolint:gosec // argocd-cm's oidc.tls.insecure.skip.verify asks for it
		if conf.OIDC.RootCA != "" {
			tlsConf.RootCAs = x509.NewCertPool()
			if !tlsConf.RootCAs.AppendCertsFromPEM([]byte(conf.OIDC.RootCA)) {
				return nil, errors.New("oidc.config rootCA holds no PEM certificate")
			}
		}
		httpClient.Transport = &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConf}
	}
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, httpClient), conf.OIDC.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OIDC provider %s: %w", conf.OIDC.Issuer, err)
	}
	s.ssoCache.p = &ssoProvider{key: key, cfg: conf.OIDC, sso: conf, provider: provider, client: httpClient}
	return s.ssoCache.p, nil
}

func (p *ssoProvider) oauth2(redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: p.provider.Endpoint(),
		RedirectURL: redirect, Scopes: p.cfg.Scopes()}
}

// verify checks an ID token from the provider, issued to the server's
// client or to the CLI's, and returns its claims.
func (p *ssoProvider) verify(ctx context.Context, raw string) (map[string]any, error) {
	ctx = oidc.ClientContext(ctx, p.client)
	var lastErr error
	for _, id := range []string{p.cfg.ClientID, p.cfg.CLIClientID} {
		if id == "" {
			continue
		}
		tok, err := p.provider.Verifier(&oidc.Config{ClientID: id}).Verify(ctx, raw)
		if err != nil {
			lastErr = err
			continue
		}
		claims := map[string]any{}
		if err := tok.Claims(&claims); err != nil {
			return nil, err
		}
		return claims, nil
	}
	return nil, lastErr
}

// baseURL is the external URL r came through: argocd-cm's url, or the
// one of additionalUrls with r's host, never a host only the request names.
func (p *ssoProvider) baseURL(r *http.Request) string { return p.sso.URLFor(r.Host, r.URL.Path) }

// callbackURL is where the provider sends the browser back: below the
// external URL the login came through, as Argo CD does.
func (p *ssoProvider) callbackURL(r *http.Request) string { return p.baseURL(r) + "/auth/callback" }

// errNoURL refuses SSO when argocd-cm's url is unset: the address the
// provider sends the browser back to would come from the request.
const errNoURL = "SSO needs argocd-cm's url: the address users reach this server at"

// ssoLogin answers GET /auth/login: it sends the browser to the provider
// with a fresh state and a PKCE challenge.
func (s *Server) ssoLogin(w http.ResponseWriter, r *http.Request) error {
	p, err := s.sso(r.Context())
	if err != nil {
		return err
	}
	if p == nil {
		return badRequest("SSO is not configured (oidc.config in argocd-cm)")
	}
	if p.sso.URL == "" {
		return badRequest(errNoURL)
	}
	returnURL := safeReturnURL(r.URL.Query().Get("return_url"), p.baseURL(r))
	state, verifier := newID(), oauth2.GenerateVerifier()
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: s.sign(state + "|" + verifier + "|" + returnURL), Path: "/auth",
		MaxAge: 300, HttpOnly: true, Secure: !s.opts.Insecure, SameSite: http.SameSiteLaxMode})
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if p.sso.Dex && p.sso.DexConnectorID != "" {
		opts = append(opts, oauth2.SetAuthURLParam("connector_id", p.sso.DexConnectorID))
	}
	if len(p.cfg.RequestedIDTokenClaims) > 0 {
		claims, _ := json.Marshal(map[string]any{"id_token": p.cfg.RequestedIDTokenClaims})
		opts = append(opts, oauth2.SetAuthURLParam("claims", string(claims)))
	}
	http.Redirect(w, r, p.oauth2(p.callbackURL(r)).AuthCodeURL(state, opts...), http.StatusSeeOther)
	return nil
}

// ssoCallback answers GET /auth/callback: it checks the state, redeems the
// code with the PKCE verifier, verifies the ID token and sets it as the
// session cookie, as Argo CD does.
func (s *Server) ssoCallback(w http.ResponseWriter, r *http.Request) error {
	p, err := s.sso(r.Context())
	if err != nil || p == nil {
		return badRequest(fmt.Sprintf("SSO is not configured: %v", err))
	}
	if p.sso.URL == "" {
		return badRequest(errNoURL)
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return unauthorized(fmt.Sprintf("the identity provider refused the login: %s %s", e, q.Get("error_description")))
	}
	c, err := r.Cookie(stateCookie)
	if err != nil {
		return badRequest("no login in progress (state cookie missing)")
	}
	value, ok := s.verifySigned(c.Value)
	parts := strings.SplitN(value, "|", 3)
	if !ok || len(parts) != 3 || !hmac.Equal([]byte(parts[0]), []byte(q.Get("state"))) {
		return badRequest("invalid login state")
	}
	ctx := oidc.ClientContext(r.Context(), p.client)
	tok, err := p.oauth2(p.callbackURL(r)).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(parts[1]))
	if err != nil {
		return unauthorized("redeeming the authorization code: " + err.Error())
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return unauthorized("the identity provider returned no ID token")
	}
	if _, err := p.verify(r.Context(), raw); err != nil {
		return unauthorized("invalid ID token: " + err.Error())
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/auth", MaxAge: -1})
	if err := s.setSession(w, raw); err != nil {
		return err
	}
	http.Redirect(w, r, parts[2], http.StatusSeeOther)
	return nil
}

// safeReturnURL is where a login may send the browser back to: a path of
// this server, or an address below argocd-cm's url (base); anything else,
// a path a browser would read as another host ("//host", `/\host`) among
// them, is "/".
func safeReturnURL(raw, base string) string {
	if raw == "" || strings.ContainsAny(raw, "\\\x00\r\n\t") {
		return "/"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "/"
	}
	if u.Scheme == "" && u.Host == "" && u.User == nil && strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//") {
		return raw
	}
	b, err := url.Parse(base)
	if err != nil || u.Scheme != b.Scheme || !strings.EqualFold(u.Host, b.Host) || u.User != nil ||
		!strings.HasPrefix(u.Path+"/", strings.TrimSuffix(b.Path, "/")+"/") {
		return "/"
	}
	return u.String()
}

// settingsResponse is what GET /api/v1/settings tells clients, the CLI's
// --sso login among them.
type settingsResponse struct {
	settings.PublicSettings
	URL        string          `json:"url,omitempty"`
	OIDCConfig *oidcClientInfo `json:"oidcConfig,omitempty"`
	// ControllerNamespace is the control namespace, whose Applications'
	// RBAC objects leave the namespace out.
	ControllerNamespace string `json:"controllerNamespace,omitempty"`
}

type oidcClientInfo struct {
	Name        string   `json:"name"`
	Issuer      string   `json:"issuer"`
	ClientID    string   `json:"clientID"`
	CLIClientID string   `json:"cliClientID,omitempty"`
	Scopes      []string `json:"scopes"`
}

func (s *Server) settings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.sso(r.Context())
	if err != nil {
		return err
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	otherLogins := false
	for name, a := range accounts {
		otherLogins = otherLogins || (name != "admin" && a.Enabled && a.Can(settings.CapabilityLogin))
	}
	out := settingsResponse{PublicSettings: cm.Public(otherLogins), ControllerNamespace: s.opts.Namespace}
	if p != nil {
		out.URL = p.sso.URL
		out.OIDCConfig = &oidcClientInfo{Name: p.cfg.Name, Issuer: p.cfg.Issuer, ClientID: p.cfg.ClientID, CLIClientID: p.cfg.CLIClientID, Scopes: p.cfg.Scopes()}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// authenticateSSO accepts an ID token of the configured provider and
// returns the session claims and all the token's claims (for the RBAC
// scopes, groups by default). ok is false when the token is not the
// provider's.
func (s *Server) authenticateSSO(ctx context.Context, raw string) (*session.Claims, map[string]any, bool, error) {
	unverified := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(raw, unverified); err != nil {
		return nil, nil, false, nil
	}
	iss, _ := unverified["iss"].(string)
	if iss == session.Issuer {
		return nil, nil, false, nil
	}
	p, err := s.sso(ctx)
	if err != nil || p == nil || iss != p.cfg.Issuer {
		return nil, nil, false, nil
	}
	claims, err := p.verify(ctx, raw)
	if err != nil {
		return nil, nil, true, fmt.Errorf("%w: %v", session.ErrInvalidToken, err)
	}
	sub, _ := claims["sub"].(string)
	return &session.Claims{Subject: sub, Issuer: iss}, claims, true, nil
}

// sign and verifySigned protect a cookie's value with the server key.
func (s *Server) sign(value string) string {
	mac := hmac.New(sha256.New, s.secret.SecretKey)
	mac.Write([]byte(value))
	return base64.RawURLEncoding.EncodeToString([]byte(value)) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Server) verifySigned(signed string) (string, bool) {
	v, m, ok := strings.Cut(signed, ".")
	if !ok {
		return "", false
	}
	value, err1 := base64.RawURLEncoding.DecodeString(v)
	sum, err2 := base64.RawURLEncoding.DecodeString(m)
	if err1 != nil || err2 != nil {
		return "", false
	}
	mac := hmac.New(sha256.New, s.secret.SecretKey)
	mac.Write(value)
	return string(value), hmac.Equal(sum, mac.Sum(nil))
}
