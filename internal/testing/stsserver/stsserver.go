// Package stsserver is a local stand-in, over HTTPS, for AWS STS and the
// EKS token authenticator in front of a cluster's API server: STS's
// AssumeRole and GetCallerIdentity (every request's Signature Version 4
// checked against the secret key it names, presigned or not), and a
// Kubernetes TokenReview webhook that takes an EKS token ("k8s-aws-v1."
// and a presigned GetCallerIdentity URL), has STS verify it for its
// cluster's name, and answers with the caller's ARN, as
// aws-iam-authenticator does.
package stsserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
)

// Account is the AWS account of every identity the server knows.
const Account = "123456789012"

// Server is a running STS and token webhook.
type Server struct {
	// URL is STS's endpoint (AWS_ENDPOINT_URL_STS).
	URL string
	// AccessKeyID and SecretAccessKey are the user "deployer"'s keys.
	AccessKeyID, SecretAccessKey string
	// RoleARN is a role the user may assume.
	RoleARN string
	// ClusterName is the EKS cluster the webhook stands in front of: a
	// token signed for another cluster's name is refused.
	ClusterName string

	srv *httptest.Server

	mu    sync.Mutex
	keys  map[string]identity // access key ID to its secret and who it is
	calls map[string]int      // answered STS actions
}

// identity is who an access key is.
type identity struct {
	secret, sessionToken, arn string
}

// New starts a server that stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{AccessKeyID: "AKIA" + strings.ToUpper(random(8)), SecretAccessKey: random(20),
		RoleARN: "arn:aws:iam::" + Account + ":role/capstan-deployer", ClusterName: "prod", calls: map[string]int{}}
	s.keys = map[string]identity{s.AccessKeyID: {secret: s.SecretAccessKey, arn: "arn:aws:iam::" + Account + ":user/deployer"}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /authenticate", s.authenticate)
	mux.HandleFunc("/", s.sts)
	s.srv = httptest.NewTLSServer(mux)
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// Calls counts the STS actions (AssumeRole, GetCallerIdentity) answered.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}

// CAFile writes the server's certificate into dir for AWS_CA_BUNDLE.
func (s *Server) CAFile(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "sts-ca.pem")
	if err := os.WriteFile(path, s.caData(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (s *Server) caData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// UseFromEnvironment points the AWS SDK of this process (and of the
// programs it starts) at the server until the test ends: its endpoint and
// certificate, a region, and the user's keys in the profile "eks" of a
// shared credentials file, with no keys in the environment.
func (s *Server) UseFromEnvironment(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	if err := os.WriteFile(creds, []byte("[eks]\naws_access_key_id = "+s.AccessKeyID+"\naws_secret_access_key = "+s.SecretAccessKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_STS": s.URL, "AWS_CA_BUNDLE": s.CAFile(t, dir), "AWS_REGION": "eu-west-1",
		"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": ""} {
		t.Setenv(k, v)
	}
}

// WebhookConfig writes into dir the kubeconfig with which kube-apiserver
// calls the token webhook (see localcluster.Options.TokenWebhookConfig).
func (s *Server) WebhookConfig(t testing.TB, dir string) string {
	t.Helper()
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: eks-authenticator
  cluster:
    server: %s/authenticate
    certificate-authority-data: %s
users:
- name: kube-apiserver
  user: {}
contexts:
- name: webhook
  context: {cluster: eks-authenticator, user: kube-apiserver}
current-context: webhook
`, s.URL, base64.StdEncoding.EncodeToString(s.caData()))
	path := filepath.Join(dir, "token-webhook.kubeconfig")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sts answers STS's query API.
func (s *Server) sts(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		stsError(w, http.StatusBadRequest, "MalformedInput")
		return
	}
	params := r.URL.Query()
	if r.Method == http.MethodPost {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			stsError(w, http.StatusBadRequest, "MalformedInput")
			return
		}
		params = form
	}
	who, err := s.verify(r, body)
	if err != nil {
		stsError(w, http.StatusForbidden, "SignatureDoesNotMatch: "+err.Error())
		return
	}
	action := params.Get("Action")
	s.mu.Lock()
	s.calls[action]++
	s.mu.Unlock()
	switch action {
	case "GetCallerIdentity":
		writeXML(w, fmt.Sprintf(`<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>`+
			`<Arn>%s</Arn><UserId>AIDA%s</UserId><Account>%s</Account></GetCallerIdentityResult>`+
			`<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></GetCallerIdentityResponse>`, who.arn, random(6), Account, random(8)))
	case "AssumeRole":
		if params.Get("RoleArn") != s.RoleARN {
			stsError(w, http.StatusForbidden, "AccessDenied")
			return
		}
		session := params.Get("RoleSessionName")
		key, secret, token := "ASIA"+strings.ToUpper(random(8)), random(20), random(32)
		arn := "arn:aws:sts::" + Account + ":assumed-role/" + s.RoleARN[strings.LastIndex(s.RoleARN, "/")+1:] + "/" + session
		s.mu.Lock()
		s.keys[key] = identity{secret: secret, sessionToken: token, arn: arn}
		s.mu.Unlock()
		writeXML(w, fmt.Sprintf(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>`+
			`<AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s</Expiration>`+
			`</Credentials><AssumedRoleUser><Arn>%s</Arn><AssumedRoleId>AROA%s:%s</AssumedRoleId></AssumedRoleUser></AssumeRoleResult>`+
			`<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></AssumeRoleResponse>`,
			key, secret, token, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), arn, random(6), session, random(8)))
	default:
		stsError(w, http.StatusBadRequest, "InvalidAction")
	}
}

// authenticate is the TokenReview webhook: an EKS token is a presigned
// GetCallerIdentity URL, which STS must take with the cluster's name.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) {
	var review authnv1.TokenReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	arn, err := s.Authenticate(review.Spec.Token)
	review.Status = authnv1.TokenReviewStatus{Authenticated: err == nil}
	if err != nil {
		review.Status.Error = err.Error()
	} else {
		review.Status.User = authnv1.UserInfo{Username: arn, Groups: []string{"system:masters"}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// Authenticate asks STS who an EKS token's presigned request is, for the
// server's cluster, and returns the caller's ARN.
func (s *Server) Authenticate(token string) (string, error) {
	encoded, ok := strings.CutPrefix(token, "k8s-aws-v1.")
	if !ok {
		return "", fmt.Errorf("not an EKS token")
	}
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return "", fmt.Errorf("the token is not base64url: %w", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil || "https://"+u.Host != s.URL || u.Query().Get("Action") != "GetCallerIdentity" {
		return "", fmt.Errorf("the token is not a GetCallerIdentity request to STS")
	}
	if !slices.Contains(strings.Split(u.Query().Get("X-Amz-SignedHeaders"), ";"), "x-k8s-aws-id") {
		return "", fmt.Errorf("the token does not sign the cluster's name")
	}
	req, err := http.NewRequest(http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return "", err
	}
	req.Header.Set("x-k8s-aws-id", s.ClusterName)
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Arn string `xml:"GetCallerIdentityResult>Arn"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("STS refused the token: %s", resp.Status)
	}
	return out.Arn, nil
}

// verify checks a request's Signature Version 4, from its Authorization
// header or, presigned, its query, and returns who signed it.
func (s *Server) verify(r *http.Request, body []byte) (identity, error) {
	query := r.URL.Query()
	var credential, signedHeaders, signature, amzDate, token string
	payload := sha256Hex(body)
	if auth := r.Header.Get("Authorization"); auth != "" {
		fields := map[string]string{}
		for part := range strings.SplitSeq(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			fields[k] = v
		}
		credential, signedHeaders, signature = fields["Credential"], fields["SignedHeaders"], fields["Signature"]
		amzDate, token = r.Header.Get("X-Amz-Date"), r.Header.Get("X-Amz-Security-Token")
	} else {
		credential, signedHeaders, signature = query.Get("X-Amz-Credential"), query.Get("X-Amz-SignedHeaders"), query.Get("X-Amz-Signature")
		amzDate, token = query.Get("X-Amz-Date"), query.Get("X-Amz-Security-Token")
		signed, err := time.Parse("20060102T150405Z", amzDate)
		expires, _ := strconv.Atoi(query.Get("X-Amz-Expires"))
		if err != nil || time.Since(signed) > time.Duration(expires)*time.Second {
			return identity{}, fmt.Errorf("the presigned request expired")
		}
		query.Del("X-Amz-Signature")
	}
	scope := strings.SplitN(credential, "/", 5)
	if len(scope) != 5 || scope[3] != "sts" || scope[4] != "aws4_request" {
		return identity{}, fmt.Errorf("credential scope %q", credential)
	}
	s.mu.Lock()
	who, ok := s.keys[scope[0]]
	s.mu.Unlock()
	if !ok || who.sessionToken != token {
		return identity{}, fmt.Errorf("unknown access key or session token")
	}
	var canonical strings.Builder
	fmt.Fprintf(&canonical, "%s\n%s\n%s\n", r.Method, cmpOr(r.URL.EscapedPath(), "/"), canonicalQuery(query))
	for _, name := range strings.Split(signedHeaders, ";") {
		value := r.Header.Get(name)
		if name == "host" {
			value = r.Host
		}
		fmt.Fprintf(&canonical, "%s:%s\n", name, strings.Join(strings.Fields(value), " "))
	}
	fmt.Fprintf(&canonical, "\n%s\n%s", signedHeaders, payload)
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", amzDate, strings.Join(scope[1:], "/"), sha256Hex([]byte(canonical.String()))}, "\n")
	key := []byte("AWS4" + who.secret)
	for _, part := range scope[1:] {
		key = hmacSHA256(key, part)
	}
	if !hmac.Equal([]byte(hex.EncodeToString(hmacSHA256(key, toSign))), []byte(signature)) {
		return identity{}, fmt.Errorf("the signature does not match")
	}
	return who, nil
}

// canonicalQuery is SigV4's canonical query string: sorted, each key and
// value encoded as RFC 3986 asks.
func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, escape(k)+"="+escape(v))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "&")
}

func escape(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func stsError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>x</RequestId></ErrorResponse>`,
		strings.SplitN(code, ":", 2)[0], code)
}

func writeXML(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml")
	_, _ = io.WriteString(w, body)
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(base64.RawURLEncoding.EncodeToString(b))[:n]
}
