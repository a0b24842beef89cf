// Package tokenserver is a local stand-in, over HTTPS, for the cloud
// identity services repository credentials buy tokens from: Google's
// OAuth2 token endpoint (a service account's signed JWT assertion, checked
// against its key), Microsoft Entra ID (its tenant metadata, and tokens
// for a client secret or a federated workload identity token) and an
// Azure Container Registry's challenge and token exchange. Every token it
// issues is recorded, so a test can check that what reached a Git server
// is what the service issued.
package tokenserver

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running token service.
type Server struct {
	// URL is the https base URL: Google's token endpoint is URL +
	// "/google/token", Entra ID's authority host is URL, and the registry
	// answers at Host.
	URL string
	// Host is URL's host:port, the registry's name.
	Host string
	// GoogleEmail and GoogleKey are a service account's e-mail and its
	// key (JSON, as Google issues it) whose token_uri is this server.
	GoogleEmail string
	GoogleKey   string
	// Tenant, ClientID and ClientSecret are an Entra ID service principal
	// the server accepts; FederatedToken is the workload identity token it
	// accepts for ClientID in place of the secret.
	Tenant, ClientID, ClientSecret, FederatedToken string

	srv *httptest.Server
	key *rsa.PrivateKey

	mu     sync.Mutex
	issued map[string]string // token to the scope it was issued for
	counts map[string]int    // requests per kind
}

// New starts a server that stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{GoogleEmail: "deployer@shop-project.iam.gserviceaccount.com", Tenant: "0b9ab6bb-7e6c-4d8f-9b8e-0c4e2a1f3c21",
		ClientID: "5d3c1a7e-2b4f-4e6a-8c9d-1f2e3a4b5c6d", ClientSecret: "sp-s3cret", FederatedToken: "federated-" + randomText(t),
		key: key, issued: map[string]string{}, counts: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /google/token", s.google)
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", s.entraMetadata)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", s.entraToken)
	mux.HandleFunc("GET /v2/{$}", s.registryChallenge)
	mux.HandleFunc("POST /oauth2/exchange", s.registryExchange)
	s.srv = httptest.NewTLSServer(mux)
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	s.Host = strings.TrimPrefix(s.URL, "https://")
	der := x509.MarshalPKCS1PrivateKey(key)
	keyJSON, err := json.Marshal(map[string]string{"type": "service_account", "project_id": "shop-project", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})), "client_email": s.GoogleEmail,
		"client_id": "1234567890", "token_uri": s.URL + "/google/token"})
	if err != nil {
		t.Fatal(err)
	}
	s.GoogleKey = string(keyJSON)
	return s
}

// UseWorkloadIdentity gives this process (and the programs it starts),
// until the test ends, the environment Azure's workload identity webhook
// gives a pod, for the server's service principal and authority.
func (s *Server) UseWorkloadIdentity(t *testing.T) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(file, []byte(s.FederatedToken), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"AZURE_CLIENT_ID": s.ClientID, "AZURE_TENANT_ID": s.Tenant, "AZURE_FEDERATED_TOKEN_FILE": file,
		"AZURE_AUTHORITY_HOST": s.URL, "AZURE_TOKEN_CREDENTIALS": "WorkloadIdentityCredential"} {
		t.Setenv(k, v)
	}
}

// Client is an HTTP client that trusts the server's certificate.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// CAData is the server's certificate, PEM-encoded.
func (s *Server) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Scope returns the scope token was issued for; "" when the server never
// issued it.
func (s *Server) Scope(token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued[token]
}

// Requests counts the token requests of kind ("google", "entra",
// "exchange") the server answered with a token.
func (s *Server) Requests(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// issue makes a token (a JWT the server signs, valid an hour) for scope.
func (s *Server) issue(kind, scope string) (string, time.Time) {
	exp := time.Now().Add(time.Hour)
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"scp": scope, "exp": exp.Unix(), "jti": randomText(nil)})
	payload := header + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(payload))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	token := payload + "." + base64.RawURLEncoding.EncodeToString(sig)
	s.mu.Lock()
	s.issued[token] = scope
	s.counts[kind]++
	s.mu.Unlock()
	return token, exp
}

// google answers a JWT bearer grant whose assertion the service account's
// key signed, for this token endpoint.
func (s *Server) google(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		oauthError(w, "unsupported_grant_type")
		return
	}
	var claims struct {
		Iss, Aud, Scope string
		Exp             int64
	}
	if !s.verify(r.FormValue("assertion"), &claims) || claims.Iss != s.GoogleEmail || claims.Aud != s.URL+"/google/token" ||
		!slices.Contains(strings.Fields(claims.Scope), "https://www.googleapis.com/auth/cloud-platform") || claims.Exp < time.Now().Unix() {
		oauthError(w, "invalid_grant")
		return
	}
	token, _ := s.issue("google", claims.Scope)
	writeJSON(w, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600})
}

// verify checks a JWT's RS256 signature with the service account's key and
// reads its claims.
func (s *Server) verify(jwt string, claims any) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	return err == nil && json.Unmarshal(payload, claims) == nil
}

// entraMetadata is a tenant's OpenID metadata, which names its endpoints.
func (s *Server) entraMetadata(w http.ResponseWriter, r *http.Request) {
	tenant := r.PathValue("tenant")
	base := s.URL + "/" + url.PathEscape(tenant)
	writeJSON(w, map[string]any{"token_endpoint": base + "/oauth2/v2.0/token", "authorization_endpoint": base + "/oauth2/v2.0/authorize",
		"issuer": base + "/v2.0", "device_authorization_endpoint": base + "/oauth2/v2.0/devicecode"})
}

// entraToken answers a client credentials grant of the service principal,
// with its secret or its federated token.
func (s *Server) entraToken(w http.ResponseWriter, r *http.Request) {
	secretOK := r.FormValue("client_secret") == s.ClientSecret
	federatedOK := r.FormValue("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" &&
		r.FormValue("client_assertion") == s.FederatedToken
	if r.PathValue("tenant") != s.Tenant || r.FormValue("grant_type") != "client_credentials" || r.FormValue("client_id") != s.ClientID ||
		!(secretOK || federatedOK) {
		oauthError(w, "invalid_client")
		return
	}
	scope := strings.TrimSpace(strings.ReplaceAll(r.FormValue("scope"), "openid offline_access profile", ""))
	token, _ := s.issue("entra", scope)
	writeJSON(w, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600})
}

// registryChallenge is an Azure Container Registry's answer to an
// anonymous request.
func (s *Server) registryChallenge(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="https://%s/oauth2/token",service="%s"`, s.Host, s.Host))
	http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
}

// registryExchange trades an Entra ID token for Azure Resource Manager for
// the registry's refresh token.
func (s *Server) registryExchange(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("grant_type") != "access_token" || r.FormValue("service") != s.Host ||
		!strings.HasPrefix(s.Scope(r.FormValue("access_token")), "https://management.core.windows.net") {
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
		return
	}
	token, _ := s.issue("exchange", "registry:"+s.Host)
	writeJSON(w, map[string]any{"refresh_token": token})
}

func oauthError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "refused by the test token service"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func randomText(t testing.TB) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil && t != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
