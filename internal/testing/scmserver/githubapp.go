package scmserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// GitHubApp is a GitHub App the local GitHub APIs know: requests signed
// with its key (a JWT whose issuer is its ID) may look up its
// installation and buy the installation's token, which then reads as the
// API's own token does.
type GitHubApp struct {
	ID, InstallationID int64
	// PrivateKeyPEM is the app's key, as its credentials Secret holds it.
	PrivateKeyPEM []byte
	key           *rsa.PrivateKey
	token         string
}

// NewGitHubApp makes an app with a fresh key.
func NewGitHubApp(t testing.TB, id, installationID int64) *GitHubApp {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &GitHubApp{ID: id, InstallationID: installationID, key: key,
		PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		token:         "ghs_installation_" + strconv.FormatInt(installationID, 10)}
}

// signed reports whether r carries a JWT the app signed.
func (a *GitHubApp) signed(r *http.Request) bool {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &a.key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(strconv.FormatInt(a.ID, 10)))
	return err == nil
}

// carriesToken reports whether r carries the installation's token.
func (a *GitHubApp) carriesToken(r *http.Request) bool {
	return r.Header.Get("Authorization") == "token "+a.token
}

// register serves the app endpoints under prefix (the API's base path)
// for the owner the API holds: the owner's installation, and installation
// tokens. app returns the app the API knows (nil: none).
func registerApp(mux *http.ServeMux, prefix, owner string, app func() *GitHubApp) {
	installation := func(w http.ResponseWriter, r *http.Request) {
		a := app()
		if a == nil || !a.signed(r) || r.PathValue("owner") != owner {
			reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		reply(w, http.StatusOK, map[string]any{"id": a.InstallationID, "app_id": a.ID})
	}
	mux.HandleFunc("GET "+prefix+"orgs/{owner}/installation", installation)
	mux.HandleFunc("GET "+prefix+"users/{owner}/installation", installation)
	mux.HandleFunc("POST "+prefix+"app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		a := app()
		if a == nil || !a.signed(r) || r.PathValue("id") != strconv.FormatInt(a.InstallationID, 10) {
			reply(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded"})
			return
		}
		reply(w, http.StatusCreated, map[string]any{"token": a.token, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	})
}

// appAuth lets through what the app may send: its JWT to the app
// endpoints (which check it themselves) and its installation token.
func appAuth(app *GitHubApp, r *http.Request) bool {
	if app == nil {
		return false
	}
	return app.carriesToken(r) || strings.Contains(r.URL.Path, "/installation") || strings.Contains(r.URL.Path, "/app/installations/")
}
