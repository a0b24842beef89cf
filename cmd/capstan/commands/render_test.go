package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestRenderLocalKustomizeAsJSON(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\nnamePrefix: x-\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "render", "--local", dir, "--path", "app", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(out), &objs); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	if len(objs) != 1 || objs[0]["metadata"].(map[string]any)["name"] != "x-cfg" {
		t.Errorf("objects = %v", objs)
	}
}

func TestRenderFromGitAsYAML(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"guestbook/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gb}\n"})
	out, errOut, code := runCLI(t, "render", "--repo", remote.URL, "--revision", "main", "--path", "guestbook")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "---\napiVersion: v1\nkind: ConfigMap\n") || !strings.Contains(out, "name: gb") {
		t.Errorf("unexpected YAML:\n%s", out)
	}
}

func TestRenderErrorIsOneLineAndExitsOne(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   y: z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"render", "--local", dir},
		{"render", "--local", dir, "--path", "../.."},
		{"render"},
		{"render", "--local", dir, "-o", "xml"},
	} {
		out, errOut, code := runCLI(t, args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "error: ") {
			t.Errorf("%v: stderr is not one error line: %q", args, errOut)
		}
		if out != "" {
			t.Errorf("%v: printed output despite the error: %q", args, out)
		}
	}
}

func TestRenderLocalHelmChart(t *testing.T) {
	charts := filepath.Join("..", "..", "..", "internal", "repo", "render", "helm", "testdata", "charts")
	out, errOut, code := runCLI(t, "render", "--local", charts, "--path", "conditionals",
		"--values", "values-prod.yaml", "--helm-set", "service.type=NodePort", "--helm-set", "service.nodePort=30080",
		"--release-name", "shop", "--dest-namespace", "prod", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(out), &objs); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, o := range objs {
		kinds[o["kind"].(string)] = o["metadata"].(map[string]any)["name"].(string)
	}
	for _, kind := range []string{"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler"} {
		if kinds[kind] != "shop-conditionals" {
			t.Errorf("%s = %q, want shop-conditionals (objects %v)", kind, kinds[kind], kinds)
		}
	}
}
