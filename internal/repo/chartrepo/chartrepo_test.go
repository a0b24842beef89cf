package chartrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/chartserver"
)

var charts = []chartserver.Chart{
	{Name: "web", Version: "1.0.0", Files: map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-1-0-0}\n"}},
	{Name: "web", Version: "1.4.2", Files: map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-1-4-2}\n"}},
	{Name: "web", Version: "2.0.0", Files: map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-2-0-0}\n"}},
}

func checkResolveAndFetch(t *testing.T, c *Client, repoURL string, creds git.Creds) {
	t.Helper()
	ctx := context.Background()
	for constraint, want := range map[string]string{"1.0.0": "1.0.0", "1.*": "1.4.2", "^1.0": "1.4.2", "": "2.0.0", "*": "2.0.0", ">=2": "2.0.0"} {
		got, err := c.Resolve(ctx, repoURL, "web", constraint, creds, false)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", constraint, err)
		}
		if got != want {
			t.Errorf("Resolve(%q) = %s, want %s", constraint, got, want)
		}
	}
	if _, err := c.Resolve(ctx, repoURL, "web", "3.x", creds, false); !errors.Is(err, ErrChartNotFound) {
		t.Errorf("no matching version: got %v", err)
	}
	dir, err := c.Fetch(ctx, repoURL, "web", "1.4.2", creds)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "templates", "cm.yaml"))
	if err != nil || !strings.Contains(string(data), "web-1-4-2") {
		t.Errorf("fetched chart holds %q, %v", data, err)
	}
	again, err := c.Fetch(ctx, repoURL, "web", "1.4.2", creds)
	if err != nil || again != dir {
		t.Errorf("second fetch: %s, %v; want the cached %s", again, err, dir)
	}
}

func TestHTTPChartRepository(t *testing.T) {
	srv := chartserver.NewHTTPRepo(t, charts...)
	c := NewClient(Options{Root: t.TempDir()})
	checkResolveAndFetch(t, c, srv.URL, git.Creds{Username: srv.Username, Password: srv.Password})

	_, err := NewClient(Options{Root: t.TempDir()}).Resolve(context.Background(), srv.URL, "web", "*", git.Creds{Username: srv.Username, Password: "wrong"}, false)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong password: got %v, want an error with the 401", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong") {
		t.Errorf("error shows the password: %v", err)
	}
}

func TestOCIRegistry(t *testing.T) {
	reg := chartserver.NewOCIRegistry(t, charts...)
	c := NewClient(Options{Root: t.TempDir(), PlainHTTP: true})
	checkResolveAndFetch(t, c, reg.URL, git.Creds{})
	// Argo CD stores OCI repositories without a scheme.
	if v, err := c.Resolve(context.Background(), reg.Host+"/charts", "web", "1.0.0", git.Creds{}, true); err != nil || v != "1.0.0" {
		t.Errorf("scheme-less OCI URL: %s, %v", v, err)
	}
}

func TestIsOCI(t *testing.T) {
	for u, want := range map[string]bool{
		"oci://ghcr.io/org/charts":     true,
		"ghcr.io/org/charts":           true,
		"https://charts.example.com":   false,
		"http://127.0.0.1:8080/charts": false,
	} {
		if IsOCI(u) != want {
			t.Errorf("IsOCI(%q) = %v", u, !want)
		}
	}
}

// TestUserAgent: reposerver.helm.user.agent reaches HTTP chart
// repositories and OCI registries; without it they see Helm's.
func TestUserAgent(t *testing.T) {
	srv := chartserver.NewHTTPRepo(t, charts...)
	reg := chartserver.NewOCIRegistry(t, charts...)
	ctx := context.Background()
	c := NewClient(Options{Root: t.TempDir(), PlainHTTP: true, UserAgent: "acme-cd/1.0"})
	if _, err := c.Fetch(ctx, srv.URL, "web", "1.0.0", git.Creds{Username: srv.Username, Password: srv.Password}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(ctx, reg.URL, "web", "*", git.Creds{}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(ctx, reg.URL, "web", "1.0.0", git.Creds{}); err != nil {
		t.Fatal(err)
	}
	for name, seen := range map[string][]string{"the HTTP repository": srv.UserAgents(), "the registry": reg.UserAgents()} {
		if len(seen) == 0 {
			t.Errorf("%s was sent nothing", name)
		}
		for _, ua := range seen {
			if ua != "acme-cd/1.0" {
				t.Errorf("%s was sent User-Agent %q", name, ua)
			}
		}
	}
	before := len(srv.UserAgents())
	if _, err := NewClient(Options{Root: t.TempDir()}).Fetch(ctx, srv.URL, "web", "1.0.0", git.Creds{Username: srv.Username, Password: srv.Password}); err != nil {
		t.Fatal(err)
	}
	if ua := srv.UserAgents()[before]; !strings.HasPrefix(ua, "Helm/") {
		t.Errorf("default User-Agent %q", ua)
	}
}

// TestChartExtractedSizeBound: a chart larger than the bound once
// unpacked is refused, naming the setting; within it (or unbounded) it
// is unpacked.
func TestChartExtractedSizeBound(t *testing.T) {
	big := chartserver.Chart{Name: "big", Version: "1.0.0", Files: map[string]string{"files/blob.txt": strings.Repeat("z", 4<<20)}}
	srv := chartserver.NewHTTPRepo(t, big)
	creds := git.Creds{Username: srv.Username, Password: srv.Password}
	ctx := context.Background()
	_, err := NewClient(Options{Root: t.TempDir(), MaxExtractedBytes: 1 << 20}).Fetch(ctx, srv.URL, "big", "1.0.0", creds)
	if err == nil || !strings.Contains(err.Error(), "larger than the limit of 1048576 bytes") || !strings.Contains(err.Error(), "reposerver.helm.manifest.max.extracted.size") {
		t.Errorf("a 4 MiB chart under a 1 MiB bound: %v", err)
	}
	for _, bound := range []int64{8 << 20, -1} {
		dir, err := NewClient(Options{Root: t.TempDir(), MaxExtractedBytes: bound}).Fetch(ctx, srv.URL, "big", "1.0.0", creds)
		if err != nil {
			t.Fatalf("bound %d: %v", bound, err)
		}
		if fi, err := os.Stat(filepath.Join(dir, "files", "blob.txt")); err != nil || fi.Size() != 4<<20 {
			t.Errorf("bound %d: unpacked %v, %v", bound, fi, err)
		}
	}
}
