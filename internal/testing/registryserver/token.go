package registryserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	// The registry's token auth registers itself when imported.
	_ "github.com/distribution/distribution/v3/registry/auth/token"
)

const (
	tokenIssuer  = "capstan-test-token-issuer"
	tokenService = "capstan-test-registry"
	tokenKeyID   = "capstan-test-key"
)

// StartWithTokens runs a registry that takes bearer tokens (Docker's
// token authentication, as Docker Hub, GHCR and Harbor use), issued at
// /token on the same host after checking Username and Password with
// basic auth.
// TokenRequests counts the tokens it issued.
func StartWithTokens(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{Username: "ci", Password: "registry-pa55"}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: tokenKeyID, Algorithm: string(jose.ES256), Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	jwksPath := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksPath, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: tokenKeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tokens := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, pass, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user+":"+pass), []byte(r.Username+":"+r.Password)) != 1 {
			http.Error(w, `{"details":"incorrect username or password"}`, http.StatusUnauthorized)
			return
		}
		type access struct {
			Type    string   `json:"type"`
			Name    string   `json:"name"`
			Actions []string `json:"actions"`
		}
		var granted []access
		for _, scope := range req.URL.Query()["scope"] {
			// repository:team/app:pull,push
			parts := strings.Split(scope, ":")
			if len(parts) == 3 {
				granted = append(granted, access{Type: parts[0], Name: parts[1], Actions: strings.Split(parts[2], ",")})
			}
		}
		now := time.Now()
		token, err := jwt.Signed(signer).Claims(map[string]any{
			"iss": tokenIssuer, "sub": user, "aud": tokenService,
			"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(5 * time.Minute).Unix(),
			"jti": now.Format(time.RFC3339Nano), "access": granted,
		}).Serialize()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		r.tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"token": token, "access_token": token, "expires_in": 300})
	})
	r.serve(t, func(host string) configuration.Auth {
		return configuration.Auth{"token": configuration.Parameters{
			"realm": "http://" + host + "/token", "service": tokenService, "issuer": tokenIssuer, "jwks": jwksPath,
		}}
	}, tokens)
	return r
}

// TokenRequests counts the tokens a StartWithTokens registry's token
// server issued.
func (r *Registry) TokenRequests() int64 { return r.tokens.Load() }
