package server

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestDisableAuth: with server.disable.auth every caller is an
// administrator without a session, as in Argo CD; without it a call with
// no session is refused.
func TestDisableAuth(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	open := startWith(t, Options{Insecure: true, DisableAuth: true})
	app := `{"metadata":{"name":"open"},"spec":{"project":"default","source":{"repoURL":"https://git.example.com/a.git","path":"."},"destination":{"server":"https://kubernetes.default.svc","namespace":"x"}}}`
	if code := open.call("POST", "/api/v1/applications", app, "", nil); code != http.StatusOK {
		t.Errorf("create with authentication disabled: %d", code)
	}
	var info struct {
		LoggedIn bool   `json:"loggedIn"`
		Username string `json:"username"`
	}
	if open.call("GET", "/api/v1/session/userinfo", "", "", &info); !info.LoggedIn || info.Username != "admin" {
		t.Errorf("userinfo with authentication disabled: %+v", info)
	}
	guarded := start(t, true)
	if code := guarded.call("GET", "/api/v1/applications", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("no session, authentication on: %d", code)
	}
}

// TestGZipResponses: with server.enable.gzip the REST API's answers are
// gzipped for clients that take it and plain for the others; event
// streams are never compressed.
func TestGZipResponses(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWith(t, Options{Insecure: true, EnableGZip: true})
	token := f.adminToken()
	for _, name := range []string{"one", "two", "three"} { // an answer past gzip's threshold
		app := `{"metadata":{"name":"` + name + `"},"spec":{"project":"default","source":{"repoURL":"https://git.example.com/a.git","path":"."},"destination":{"server":"https://kubernetes.default.svc","namespace":"x"}}}`
		if code := f.call("POST", "/api/v1/applications", app, token, nil); code != http.StatusOK {
			t.Fatalf("create %s: %d", name, code)
		}
	}
	get := func(path, accept, encoding string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", f.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept-Encoding", encoding)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		// A transport of its own: the default one would ask for gzip
		// and undo it unseen.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	resp := get("/api/v1/applications", "", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("applications asked for with gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := io.ReadAll(zr); !strings.Contains(string(data), `"three"`) {
		t.Errorf("gzipped applications: %.200s", data)
	}
	if resp := get("/api/v1/applications", "", "identity"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("applications without gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	if resp := get("/api/v1/stream/applications", "text/event-stream", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("an event stream: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}

// TestStaticAssetsDir: files of server.staticassets are served beside the
// UI's own (a style sheet ui.cssurl names); nothing outside the directory
// is, and other paths still answer the page.
func TestStaticAssetsDir(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "app")
	if err := os.MkdirAll(filepath.Join(dir, "custom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "custom", "theme.css"), []byte("body{color:teal}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "secret.txt"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(parent, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	f := startWith(t, Options{Insecure: true, StaticAssetsDir: dir})
	body := func(path string) (int, string) {
		resp := f.send(t.Context(), "GET", path, "", "")
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	if code, got := body("/custom/theme.css"); code != 200 || got != "body{color:teal}" {
		t.Errorf("a file of the directory: %d %q", code, got)
	}
	for _, path := range []string{"/link.txt", "/../secret.txt", "/custom/../../secret.txt"} {
		if _, got := body(path); strings.Contains(got, "outside") {
			t.Errorf("%s reached a file outside the directory", path)
		}
	}
	if code, got := body("/applications"); code != 200 || !strings.Contains(got, "<!doctype html>") {
		t.Errorf("a page path: %d %.80q", code, got)
	}
	if _, err := New(t.Context(), Options{Client: f.c, Config: f.srv.opts.Config, Renderer: f.srv.opts.Renderer, Namespace: f.ns, Insecure: true,
		StaticAssetsDir: filepath.Join(parent, "missing")}); err != nil {
		t.Errorf("a static assets directory that does not exist: %v", err)
	}
}
