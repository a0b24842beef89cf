package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestCoreMode runs the CLI with --core: no API server and no login, the
// install reached through the kubeconfig's context and its namespace, and
// sources rendered by the CLI itself. login --core saves a context that
// keeps working that way.
func TestCoreMode(t *testing.T) {
	f := startCapstan(t, true) // the install: its controller and settings
	kubeconfig, err := clientcmd.LoadFromFile(kubeCluster.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig.Contexts[kubeconfig.CurrentContext].Namespace = f.ns
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	commit := remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})

	f.expect(0, "--core", "app", "create", "web", "--repo", remote.URL, "--path", "app",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	if out := f.expect(0, "--core", "app", "list", "-o", "name"); strings.TrimSpace(out) != f.ns+"/web" && strings.TrimSpace(out) != "web" {
		t.Errorf("app list:\n%s", out)
	}
	if out := f.expect(1, "--core", "app", "diff", "web"); !strings.Contains(out, "+  v: one") {
		t.Errorf("diff rendered by the CLI:\n%s", out)
	}
	if out := f.expect(0, "--core", "app", "sync", "web"); !strings.Contains(out, commit) || !strings.Contains(out, "Succeeded") {
		t.Errorf("sync:\n%s", out)
	}
	if out := f.expect(0, "--core", "account", "get-user-info"); !strings.Contains(out, "Logged In: true") {
		t.Errorf("get-user-info:\n%s", out)
	}

	// A saved core context needs the flag no more.
	if out := f.expect(0, "login", "--core"); !strings.Contains(out, "Context 'kubernetes' updated") {
		t.Errorf("login --core:\n%s", out)
	}
	if data, _ := os.ReadFile(f.config); !strings.Contains(string(data), "core: true") {
		t.Errorf("the saved context is not a core one:\n%s", data)
	}
	if out := f.expect(0, "app", "get", "web"); !strings.Contains(out, "Synced") || !strings.Contains(out, "settings") {
		t.Errorf("app get through the saved context:\n%s", out)
	}
	if out := f.expect(0, "proj", "list"); !strings.Contains(out, "default") {
		t.Errorf("proj list:\n%s", out)
	}

	// A context that does not exist is the kubeconfig's error, named.
	if _, _, stderr := f.run("--core", "--kube-context", "nowhere", "app", "list"); !strings.Contains(stderr, "nowhere") {
		t.Errorf("unknown kube context: %q", stderr)
	}
}
