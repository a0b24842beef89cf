package plugin

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// startSidecar serves config from a socket of its own and returns a client
// of it.
func startSidecar(t *testing.T, config string, maxOutput int) (*Client, string) {
	t.Helper()
	var cfg Config
	if err := yaml.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	sockets, err := os.MkdirTemp("", "cmp")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Config: &cfg, SocketDir: sockets, WorkDir: t.TempDir(), MaxOutputBytes: maxOutput, MaxArchiveBytes: 1 << 20})
	}()
	t.Cleanup(func() { cancel(); <-done; _ = os.RemoveAll(sockets) })
	c := New(Options{SocketDir: sockets})
	eventually.Within(t, eventually.Options{Interval: 10 * time.Millisecond}, "the sidecar's socket", func() string {
		if !c.Installed() {
			return "not installed"
		}
		return ""
	})
	return c, cfg.SocketName()
}

const echoPlugin = `kind: ConfigManagementPlugin
metadata: {name: echo}
spec:
  generate: {command: [sh, -c, "cat *.yaml"]}
  discover:
    find: {glob: "**/*.jsonnet"}
`

// rawRequest is a request whose archive holds entries as given, with the
// checksum and path the test chooses.
func rawRequest(t *testing.T, appPath string, entries []*tar.Header, bodies []string) *request {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "req")
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for i, h := range entries {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if bodies[i] != "" {
			_, _ = tw.Write([]byte(bodies[i]))
		}
	}
	_ = tw.Close()
	_ = gz.Close()
	size, _ := f.Seek(0, 1)
	data, _ := os.ReadFile(f.Name())
	sum := sha256.Sum256(data)
	return &request{archive: f, size: size, checksum: hex.EncodeToString(sum[:]), appName: "app", appPath: appPath}
}

func TestSidecarRefusesHostileRequests(t *testing.T) {
	c, socket := startSidecar(t, echoPlugin, 64)
	ctx := context.Background()
	cm := &tar.Header{Name: "app/cm.yaml", Mode: 0o644, Size: int64(len("kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n")), Typeflag: tar.TypeReg}
	cmBody := "kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n"

	if out, err := c.generate(ctx, socket, rawRequest(t, "app", []*tar.Header{cm}, []string{cmBody}), nil); err != nil || len(out) != 1 {
		t.Fatalf("a well-formed request: %v, %v", out, err)
	}
	for name, tc := range map[string]struct {
		req  *request
		want string
	}{
		"checksum": {func() *request {
			r := rawRequest(t, "app", []*tar.Header{cm}, []string{cmBody})
			r.checksum = strings.Repeat("0", 64)
			return r
		}(), "file checksum validation error"},
		"more than announced": {func() *request {
			r := rawRequest(t, "app", []*tar.Header{cm}, []string{cmBody})
			r.size--
			return r
		}(), "larger than the"},
		"path out of the archive": {rawRequest(t, "../..", []*tar.Header{cm}, []string{cmBody}), "illegal appPath"},
		"link out of the archive": {rawRequest(t, "app", []*tar.Header{cm,
			{Name: "app/passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, []string{cmBody, ""}), "points to"},
		"output over the limit": {rawRequest(t, "app", []*tar.Header{cm,
			{Name: "app/more.yaml", Mode: 0o644, Size: int64(len(cmBody)), Typeflag: tar.TypeReg}}, []string{cmBody, cmBody}), "printed more than 64 bytes"},
	} {
		if _, err := c.generate(ctx, socket, tc.req, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
}

func TestSidecarDiscovery(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"deep/lib/main.jsonnet", "flat/x.yaml", "flat/README"} {
		p := filepath.Join(root, f)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	byCommand := `kind: ConfigManagementPlugin
metadata: {name: readme}
spec:
  generate: {command: [true]}
  discover:
    find: {command: [sh, -c, "ls README 2>/dev/null || true"]}
`
	ctx := context.Background()
	for config, want := range map[string]map[string]bool{
		echoPlugin: {"deep": true, "flat": false},
		byCommand:  {"deep": false, "flat": true},
	} {
		c, _ := startSidecar(t, config, 0)
		for path, claimed := range want {
			name, err := c.Discover(ctx, &Source{Root: root, Path: path})
			if err != nil || (name != "") != claimed {
				t.Errorf("%s: Discover(%s) = %q, %v; want claimed=%v", strings.SplitN(config, "\n", 3)[1], path, name, err, claimed)
			}
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for config, want := range map[string]string{
		"kind: ConfigManagementPlugin\nspec: {generate: {command: [x]}}":                        "metadata.name should be non-empty",
		"kind: Plugin\nmetadata: {name: p}\nspec: {generate: {command: [x]}}":                   "kind should be ConfigManagementPlugin, found Plugin",
		"kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec: {generate: {args: [x]}}":      "spec.generate command should be non-empty",
		"kind: ConfigManagementPlugin\nmetadata: {name: a/b}\nspec: {generate: {command: [x]}}": "want the name of a plugin",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadConfig(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", config, err, want)
		}
	}
}
