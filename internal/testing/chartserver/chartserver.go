// Package chartserver serves packaged Helm charts for tests: an HTTP chart
// repository (index.yaml, basic auth) and an OCI registry, both real
// servers on loopback with charts packaged by Helm's SDK.
package chartserver

import (
	"crypto/subtle"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
)

// Chart is a chart to package: its name, version and files (path → content).
type Chart struct {
	Name    string
	Version string
	Files   map[string]string
}

// Package writes c to a directory, packages it with Helm's SDK and returns
// the .tgz path.
func Package(t testing.TB, c Chart, outDir string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), c.Name)
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: " + c.Name + "\nversion: " + c.Version + "\n"}
	for p, content := range c.Files {
		files[p] = content
	}
	for p, content := range files {
		full := filepath.Join(src, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := loader.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	path, err := chartutil.Save(ch, outDir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// HTTPRepo is a chart repository served over HTTP with basic auth.
type HTTPRepo struct {
	URL                string
	Username, Password string
	agents
}

// agents records the User-Agent of every request a server was sent.
type agents struct {
	mu   sync.Mutex
	seen []string
}

func (a *agents) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen = append(a.seen, r.UserAgent())
		a.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// UserAgents are the User-Agents of the requests so far, in order.
func (a *agents) UserAgents() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// NewHTTPRepo packages charts, indexes them and serves the directory.
func NewHTTPRepo(t testing.TB, charts ...Chart) *HTTPRepo {
	t.Helper()
	dir := t.TempDir()
	r := &HTTPRepo{Username: "chart-user", Password: "chart-pass"}
	srv := httptest.NewServer(r.record(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(r.Username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(r.Password)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.FileServer(http.Dir(dir)).ServeHTTP(w, req)
	})))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/charts"
	chartsDir := filepath.Join(dir, "charts")
	if err := os.MkdirAll(chartsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		Package(t, c, chartsDir)
	}
	// Relative chart URLs, as most repositories publish them.
	index, err := repo.IndexDirectory(chartsDir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, versions := range index.Entries {
		for _, v := range versions {
			for i, u := range v.URLs {
				v.URLs[i] = strings.TrimPrefix(u, "/")
			}
		}
	}
	if err := index.WriteFile(filepath.Join(chartsDir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// OCIRegistry is an OCI registry holding charts under host/charts/<name>.
type OCIRegistry struct {
	// URL is oci://host/charts, the chart repository URL to use.
	URL string
	// Host is host:port.
	Host string
	agents
}

// NewOCIRegistry starts a registry and pushes the packaged charts to it
// with Helm's registry client.
func NewOCIRegistry(t testing.TB, charts ...Chart) *OCIRegistry {
	t.Helper()
	reg := &OCIRegistry{}
	srv := httptest.NewServer(reg.record(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	rc, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, c := range charts {
		data, err := os.ReadFile(Package(t, c, out))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rc.Push(data, host+"/charts/"+c.Name+":"+c.Version); err != nil {
			t.Fatalf("pushing %s %s: %v", c.Name, c.Version, err)
		}
	}
	reg.URL, reg.Host = "oci://"+host+"/charts", host
	reg.seen = nil // the pushes
	return reg
}
