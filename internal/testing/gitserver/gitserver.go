// Package gitserver serves real Git repositories over smart HTTP for tests:
// `git http-backend` behind net/http/cgi, with basic auth, plus helpers to
// create repositories, commit files, branch and tag.
package gitserver

import (
	"bytes"
	"compress/gzip"
	"crypto/subtle"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Server is a running Git smart-HTTP server.
type Server struct {
	// URL is the base URL; a repository named r is at URL + "/r.git".
	URL string
	// Username and Password are the basic-auth credentials every request needs.
	Username, Password string

	root    string
	fetches atomic.Int64
	srv     *httptest.Server
}

// New starts a plain-HTTP server that stops when the test ends.
func New(t testing.TB) *Server { return start(t, false) }

// NewTLS starts an HTTPS server with a self-signed certificate; CAData
// returns the certificate clients must trust.
func NewTLS(t testing.TB) *Server { return start(t, true) }

// CAData is the PEM certificate of an HTTPS server.
func (s *Server) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

func start(t testing.TB, useTLS bool) *Server {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	s := &Server{Username: "git-user", Password: "s3cret-pa55", root: t.TempDir()}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(s.Username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pass), []byte(s.Password)) != 1 {
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
	if useTLS {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
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
	return r.commitWorkTree(t, message)
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

// Head returns the SHA a branch points at on the server.
func (r *Repo) Head(t testing.TB, branch string) string {
	t.Helper()
	return strings.TrimSpace(run(t, "", "git", "--git-dir", r.bare, "rev-parse", "refs/heads/"+branch))
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
