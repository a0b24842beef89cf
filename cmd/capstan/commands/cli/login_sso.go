package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/capstan-cd/capstan/internal/apiclient"
)

// ssoLogin logs in through the server's OIDC provider as Argo CD's CLI
// does: it asks the server which provider and client to use, runs the
// authorization-code flow with PKCE through the browser to a callback on
// localhost:port, and returns the ID token, which the server accepts as a
// session.
func ssoLogin(ctx context.Context, s apiclient.Server, port int, callback string, launch bool, out io.Writer) (string, error) {
	var settings struct {
		OIDCConfig *struct {
			Issuer      string   `json:"issuer"`
			ClientID    string   `json:"clientID"`
			CLIClientID string   `json:"cliClientID"`
			Scopes      []string `json:"scopes"`
		} `json:"oidcConfig"`
	}
	if err := apiclient.New(s, "").Do(ctx, "GET", "/api/v1/settings", nil, &settings); err != nil {
		return "", fmt.Errorf("reading the server's SSO settings: %w", err)
	}
	oc := settings.OIDCConfig
	if oc == nil {
		return "", errors.New("the server has no SSO configured (oidc.config in argocd-cm)")
	}
	provider, err := oidc.NewProvider(ctx, oc.Issuer)
	if err != nil {
		return "", fmt.Errorf("OIDC provider %s: %w", oc.Issuer, err)
	}
	clientID := oc.CLIClientID
	if clientID == "" {
		clientID = oc.ClientID
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return "", fmt.Errorf("listening for the SSO callback: %w", err)
	}
	conf := &oauth2.Config{ClientID: clientID, Endpoint: provider.Endpoint(), Scopes: oc.Scopes,
		RedirectURL: cmp.Or(strings.TrimSuffix(callback, "/"), fmt.Sprintf("http://localhost:%d", port)) + "/auth/callback"}
	state, verifier := rand.Text(), oauth2.GenerateVerifier()

	type result struct {
		token string
		err   error
	}
	done := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		finish := func(res result) {
			if res.err != nil {
				http.Error(w, res.err.Error(), http.StatusBadRequest)
			} else {
				fmt.Fprintln(w, "Logged in. You may close this window.")
			}
			select {
			case done <- res:
			default:
			}
		}
		switch {
		case r.URL.Path != "/auth/callback":
			http.NotFound(w, r)
		case q.Get("error") != "":
			finish(result{err: fmt.Errorf("the identity provider refused the login: %s %s", q.Get("error"), q.Get("error_description"))})
		case q.Get("state") != state:
			finish(result{err: errors.New("the login's state does not match")})
		default:
			tok, err := conf.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
			if err != nil {
				finish(result{err: fmt.Errorf("redeeming the authorization code: %w", err)})
				return
			}
			raw, _ := tok.Extra("id_token").(string)
			if raw == "" {
				finish(result{err: errors.New("the identity provider returned no ID token")})
				return
			}
			if _, err := provider.Verifier(&oidc.Config{ClientID: clientID}).Verify(r.Context(), raw); err != nil {
				finish(result{err: fmt.Errorf("invalid ID token: %w", err)})
				return
			}
			finish(result{token: raw})
		}
	})}
	go func() { _ = srv.Serve(l) }()
	defer func() {
		// Shutdown, not Close: the browser must get the page the handler
		// is still writing.
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()

	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
	fmt.Fprintf(out, "Opening the browser for SSO login: %s\n", authURL)
	if launch {
		if err := openBrowser(authURL); err != nil {
			fmt.Fprintf(out, "Could not open a browser (%v); open the address above yourself.\n", err)
		}
	}
	select {
	case res := <-done:
		return res.token, res.err
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for the SSO login: %w", ctx.Err())
	}
}

// openBrowser opens url with the desktop's browser.
func openBrowser(url string) error {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	return exec.Command(name, args...).Start()
}
