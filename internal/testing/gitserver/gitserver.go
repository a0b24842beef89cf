// Package gitserver serves real Git repositories over smart HTTP for tests:
// `git http-backend` behind net/http/cgi, with basic auth, plus helpers to
// create repositories, commit files, branch and tag.
package gitserver

import (
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a running Git smart-HTTP server.
type Server struct {
	// URL is the base URL; a repository named r is at URL + "/r.git".
	URL string
	// Username and Password are the basic-auth credentials every request
	// needs (or the BearerToken, when Options set one).
	Username, Password string
	// BearerToken is accepted in place of basic auth, when set.
	BearerToken string
	// ClientCert and ClientKey are the PEM certificate and key a client
	// must present when Options asked for client certificates.
	ClientCert, ClientKey []byte

	authorize func(*http.Request) bool
	root      string
	fetches   atomic.Int64
	srv       *httptest.Server
}

// Options shape a server.
type Options struct {
	// TLS serves HTTPS with a self-signed certificate (see CAData).
	TLS bool
	// ClientCerts, with TLS, refuses clients without the certificate in
	// ClientCert.
	ClientCerts bool
	// BearerToken, if set, is accepted in place of basic auth.
	BearerToken string
	// Authorize, if set, decides which requests are served in place of
	// the basic auth and bearer token checks (tokens a test's token
	// service issued, say).
	Authorize func(*http.Request) bool
}

// New starts a plain-HTTP server that stops when the test ends.
func New(t testing.TB) *Server { return NewWith(t, Options{}) }

// NewTLS starts an HTTPS server with a self-signed certificate; CAData
// returns the certificate clients must trust.
func NewTLS(t testing.TB) *Server { return NewWith(t, Options{TLS: true}) }

// CAData is the PEM certificate of an HTTPS server.
func (s *Server) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// NewWith starts a server shaped by opts.
func NewWith(t testing.TB, opts Options) *Server {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	s := &Server{Username: "git-user", Password: "s3cret-pa55", BearerToken: opts.BearerToken, authorize: opts.Authorize, root: t.TempDir()}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			body, err := readBody(r)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			// Only requests that want objects are fetches; protocol v2 also
			// POSTs ref listings (ls-remote) here.
			if bytes.Contains(body, []byte("want ")) {
				s.fetches.Add(1)
			}
		}
		backend.ServeHTTP(w, r)
	}))
	switch {
	case opts.TLS && opts.ClientCerts:
		pool := s.issueClientCert(t)
		s.srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
		s.srv.StartTLS()
	case opts.TLS:
		s.srv.StartTLS()
	default:
		s.srv.Start()
	}
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// authorized checks a request's basic auth, or its bearer token.
func (s *Server) authorized(r *http.Request) bool {
	if s.authorize != nil {
		return s.authorize(r)
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.BearerToken != "" {
		return subtle.ConstantTimeCompare([]byte(token), []byte(s.BearerToken)) == 1
	}
	user, pass, ok := r.BasicAuth()
	return ok && subtle.ConstantTimeCompare([]byte(user), []byte(s.Username)) == 1 &&
		subtle.ConstantTimeCompare([]byte(pass), []byte(s.Password)) == 1
}

// issueClientCert makes a CA and a client certificate it signs, kept in
// ClientCert and ClientKey, and returns the pool the server trusts.
func (s *Server) issueClientCert(t testing.TB) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "git clients"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "capstan"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s.ClientCert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	s.ClientKey = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool
}

// readBody reads the request body, leaves an identical one in its place, and
// returns it decompressed when the client gzipped it.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if r.Header.Get("Content-Encoding") != "gzip" {
		return raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Fetches counts upload-pack requests that transferred objects.
func (s *Server) Fetches() int64 { return s.fetches.Load() }

// NewRepo creates an empty bare repository whose default branch is main,
// accepting pushes from authenticated clients.
func (s *Server) NewRepo(t testing.TB, name string) *Repo {
	t.Helper()
	dir := filepath.Join(s.root, name+".git")
	run(t, "", "git", "init", "-q", "--bare", "-b", "main", dir)
	run(t, "", "git", "--git-dir", dir, "config", "http.receivepack", "true")
	return newRepo(t, dir, s.URL+"/"+name+".git")
}

// NewLocalRepo creates a bare repository reachable as file:// only.
func NewLocalRepo(t testing.TB) *Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "local.git")
	run(t, "", "git", "init", "-q", "--bare", "-b", "main", dir)
	return newRepo(t, dir, "file://"+dir)
}

// Repo is one repository with a work tree for making commits.
type Repo struct {
	// URL is how clients reach the repository.
	URL  string
	bare string
	work string
}

func newRepo(t testing.TB, bare, url string) *Repo {
	work := filepath.Join(t.TempDir(), "work")
	run(t, "", "git", "clone", "-q", bare, work)
	run(t, work, "git", "checkout", "-q", "-B", "main")
	return &Repo{URL: url, bare: bare, work: work}
}

// Commit writes files (path → content; an empty content deletes the file)
// on the current branch, pushes, and returns the new commit SHA.
func (r *Repo) Commit(t testing.TB, message string, files map[string]string) string {
	t.Helper()
	r.write(t, files)
	return r.commitWorkTree(t, message)
}

// CommitSigned is Commit with the commit signed by sign, which gets the
// commit object as Git signs it and returns an ASCII-armored signature
// (see package gpgkey).
func (r *Repo) CommitSigned(t testing.TB, message string, files map[string]string, sign func(payload []byte) string) string {
	t.Helper()
	r.write(t, files)
	run(t, r.work, "git", "add", "-A")
	run(t, r.work, "git", "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "--allow-empty", "-m", message)
	payload := run(t, r.work, "git", "cat-file", "commit", "HEAD")
	headers, body, _ := strings.Cut(payload, "\n\n")
	sig := strings.ReplaceAll(strings.TrimRight(sign([]byte(payload)), "\n"), "\n", "\n ")
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir, cmd.Stdin = r.work, strings.NewReader(headers+"\ngpgsig "+sig+"\n\n"+body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("writing the signed commit: %v", err)
	}
	run(t, r.work, "git", "reset", "-q", "--soft", strings.TrimSpace(string(out)))
	branch := strings.TrimSpace(run(t, r.work, "git", "rev-parse", "--abbrev-ref", "HEAD"))
	run(t, r.work, "git", "push", "-q", "origin", branch)
	return strings.TrimSpace(string(out))
}

// write writes files (path → content; an empty content deletes the file)
// into the work tree.
func (r *Repo) write(t testing.TB, files map[string]string) {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(r.work, path)
		if content == "" {
			_ = os.Remove(full)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Symlink adds a symbolic link at path pointing to target and commits it.
func (r *Repo) Symlink(t testing.TB, path, target string) string {
	t.Helper()
	full := filepath.Join(r.work, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		t.Fatal(err)
	}
	return r.commitWorkTree(t, "link "+path)
}

func (r *Repo) commitWorkTree(t testing.TB, message string) string {
	run(t, r.work, "git", "add", "-A")
	run(t, r.work, "git", "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "--allow-empty", "-m", message)
	branch := strings.TrimSpace(run(t, r.work, "git", "rev-parse", "--abbrev-ref", "HEAD"))
	run(t, r.work, "git", "push", "-q", "origin", branch)
	return strings.TrimSpace(run(t, r.work, "git", "rev-parse", "HEAD"))
}

// Pull updates the work tree from the server, for tests that read what
// others pushed, and returns the current commit's SHA.
func (r *Repo) Pull(t testing.TB) string {
	t.Helper()
	run(t, r.work, "git", "pull", "-q", "--rebase", "origin")
	return strings.TrimSpace(run(t, r.work, "git", "rev-parse", "HEAD"))
}

// File returns a file of the work tree (after Pull, what was pushed).
func (r *Repo) File(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.work, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Log returns the subjects and authors of the branch's last n commits,
// newest first, as "subject <name email>".
func (r *Repo) Log(t testing.TB, branch string, n int) []string {
	t.Helper()
	out := run(t, "", "git", "--git-dir", r.bare, "log", "-n", fmt.Sprint(n), "--format=%s <%an %ae>", branch)
	return strings.Split(strings.TrimSpace(out), "\n")
}

// objectID is a Git object's full SHA-1 or SHA-256.
var objectID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// CommitObject is the raw commit object sha, headers (its signature
// among them) and message.
func (r *Repo) CommitObject(t testing.TB, sha string) string {
	t.Helper()
	return run(t, "", "git", "--git-dir", r.bare, "cat-file", "commit", sha)
}

// VerifyCommit runs git verify-commit in the repository with extra
// configuration (gpg.ssh.allowedSignersFile=…), and returns its error.
func (r *Repo) VerifyCommit(sha string, config ...string) error {
	if !objectID.MatchString(sha) {
		return fmt.Errorf("%q is not a commit SHA", sha)
	}
	args := []string{"--git-dir", r.bare}
	for _, c := range config {
		args = append(args, "-c", c)
	}
	out, err := exec.Command("git", append(args, "verify-commit", "--", sha)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// Head returns the SHA a branch points at on the server.
func (r *Repo) Head(t testing.TB, branch string) string {
	t.Helper()
	return strings.TrimSpace(run(t, "", "git", "--git-dir", r.bare, "rev-parse", "refs/heads/"+branch))
}

// Show returns a file of a branch on the server.
func (r *Repo) Show(t testing.TB, branch, path string) string {
	t.Helper()
	return run(t, "", "git", "--git-dir", r.bare, "show", "refs/heads/"+branch+":"+path)
}

// Branch creates (or switches to) a branch and pushes it.
func (r *Repo) Branch(t testing.TB, name string) {
	t.Helper()
	run(t, r.work, "git", "checkout", "-q", "-B", name)
	run(t, r.work, "git", "push", "-q", "origin", name)
}

// Tag puts an annotated tag on the current commit and pushes it.
func (r *Repo) Tag(t testing.TB, name string) {
	t.Helper()
	run(t, r.work, "git", "-c", "user.name=test", "-c", "user.email=test@example.com", "tag", "-a", "-m", name, name)
	run(t, r.work, "git", "push", "-q", "origin", name)
}

func run(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// AuthURL returns the repository URL with the server's credentials in it,
// for tests that need a client without a credential store.
func (s *Server) AuthURL(r *Repo) string {
	scheme, rest, _ := strings.Cut(r.URL, "://")
	return fmt.Sprintf("%s://%s:%s@%s", scheme, s.Username, s.Password, rest)
}

// RawEntry is one entry of a tree written as it is, checks or not: a file
// (Body), a symbolic link (Link), a directory (Entries) or a submodule's
// pinned commit (Gitlink, a full SHA).
type RawEntry struct {
	Name    string
	Body    string
	Link    string
	Gitlink string
	Entries []RawEntry
}

// CommitRaw writes a commit whose tree holds exactly entries, in the order
// given and unchecked (duplicate names, ".git", links with files beneath
// their names), straight into the server's repository on branch, and
// returns its SHA: the repository a hostile user would push elsewhere.
func (r *Repo) CommitRaw(t testing.TB, branch string, entries ...RawEntry) string {
	t.Helper()
	tree := r.rawTree(t, entries)
	sha := strings.TrimSpace(runIn(t, r.bare, "", "git", "-c", "user.name=test", "-c", "user.email=test@example.com", "commit-tree", "-m", "raw", tree))
	run(t, "", "git", "--git-dir", r.bare, "update-ref", "refs/heads/"+branch, sha)
	return sha
}

func (r *Repo) rawTree(t testing.TB, entries []RawEntry) string {
	var buf bytes.Buffer
	for _, e := range entries {
		mode, sha := "100644", ""
		switch {
		case e.Entries != nil:
			mode, sha = "40000", r.rawTree(t, e.Entries)
		case e.Link != "":
			mode, sha = "120000", r.rawObject(t, "blob", []byte(e.Link))
		case e.Gitlink != "":
			mode, sha = "160000", e.Gitlink
		default:
			sha = r.rawObject(t, "blob", []byte(e.Body))
		}
		raw, err := hex.DecodeString(sha)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&buf, "%s %s\x00", mode, e.Name)
		buf.Write(raw)
	}
	return r.rawObject(t, "tree", buf.Bytes())
}

func (r *Repo) rawObject(t testing.TB, kind string, data []byte) string {
	cmd := exec.Command("git", "--git-dir", r.bare, "hash-object", "-w", "--literally", "-t", kind, "--stdin")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("writing a raw %s: %v", kind, err)
	}
	return strings.TrimSpace(string(out))
}

// runIn is run with GIT_DIR set to gitDir.
func runIn(t testing.TB, gitDir, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_DIR="+gitDir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}
