package commands

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestDiffServerSideGenerate: app diff --local --server-side-generate
// sends the local directory's files to the server, which renders them as
// the app's source (Argo CD's GetManifestsWithFiles, a client stream),
// with Argo CD's CLI over gRPC and with Capstan's; an archive
// holding a link, or not matching its checksum, is refused.
func TestDiffServerSideGenerate(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.login()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("git")})
	f.expect(0, "app", "create", "web", "--repo", remote.URL, "--path", "app", "--revision", "main",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	f.expect(0, "app", "sync", "web", "--timeout", "60")
	local := t.TempDir()
	for name, content := range map[string]string{"cm.yaml": configMapYAML("local"), "notes.txt": "not a manifest"} {
		if err := os.WriteFile(filepath.Join(local, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Over gRPC only: Argo CD's CLI sends just the first message of a
	// client stream through its gRPC-Web proxy, against Argo CD as well.
	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	if out := argocd.Expect(1, "app", "diff", "web", "--local", local, "--server-side-generate"); !strings.Contains(out, "v: local") {
		t.Errorf("Argo CD's diff with files rendered by the server:\n%s", out)
	}
	if out := f.expect(1, "app", "diff", "web", "--local", local, "--server-side-generate"); !strings.Contains(out, "+  v: local") || !strings.Contains(out, "-  v: git") {
		t.Errorf("Capstan's diff with files rendered by the server:\n%s", out)
	}
	if out := f.expect(1, "app", "diff", "web", "--local", local, "--local-repo-root", local); !strings.Contains(out, "+  v: local") {
		t.Errorf("Capstan's diff with files rendered by the CLI:\n%s", out)
	}
	if _, _, stderr := f.run("app", "diff", "web", "--local", local, "--server-side-generate", "--local-include", "*.md"); !strings.Contains(stderr, "no file of") {
		t.Errorf("no file to send: %q", stderr)
	}

	// Hostile archives, sent as they are.
	post := func(archive []byte, checksum string) (int, string) {
		t.Helper()
		stream, _ := json.Marshal(map[string]any{"query": map[string]string{"name": "web", "checksum": checksum}})
		chunk, _ := json.Marshal(map[string]any{"chunk": map[string][]byte{"chunk": archive}})
		code, body, err := f.call("POST", "/api/v1/applications/manifestsWithFiles", append(append(stream, '\n'), chunk...))
		if err != nil {
			t.Fatal(err)
		}
		return code, string(body)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	_ = tw.WriteHeader(&tar.Header{Name: "escape", Linkname: "/etc", Typeflag: tar.TypeSymlink})
	_ = tw.Close()
	_ = zw.Close()
	sum := sha256.Sum256(buf.Bytes())
	if code, body := post(buf.Bytes(), hex.EncodeToString(sum[:])); code != http.StatusBadRequest || !strings.Contains(body, "is a link") {
		t.Errorf("an archive with a link: %d %s", code, body)
	}
	if code, body := post(buf.Bytes(), "00"); code != http.StatusBadRequest || !strings.Contains(body, "checksum") {
		t.Errorf("a wrong checksum: %d %s", code, body)
	}
	if code, body := post(buf.Bytes(), ""); code != http.StatusBadRequest {
		t.Errorf("no checksum: %d %s", code, body)
	}
}
