package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSyncLocal syncs what a local directory renders instead of the
// repository, with Argo CD's CLI and Capstan's: the cluster gets the local
// objects, the app then differs from Git, no history entry names a
// revision it never deployed, and automated sync refuses it but for a dry
// run.
func TestSyncLocal(t *testing.T) {
	localcluster.
		// Other tests' apps named web leave tracked objects behind in
		// namespaces still being deleted; a name of its own keeps them out.
		Need(t)

	f := startCapstan(t, true)
	ctx := context.Background()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("git")})
	local := t.TempDir()
	write := func(v string) {
		if err := os.WriteFile(filepath.Join(local, "cm.yaml"), []byte(configMapYAML(v)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	live := func() string {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data["v"]
	}

	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	argocd.Expect(0, "app", "create", "synclocal", "--repo", remote.URL, "--path", "app", "--revision", "main",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	write("argocd-local")
	argocd.Expect(0, "app", "sync", "synclocal", "--local", local, "--local-repo-root", local, "--timeout", "60")
	if v := live(); v != "argocd-local" {
		t.Errorf("after Argo CD's local sync: v=%s", v)
	}

	f.login()
	write("capstan-local")
	f.expect(0, "app", "sync", "synclocal", "--local", local, "--local-repo-root", local, "--timeout", "60")
	if v := live(); v != "capstan-local" {
		t.Errorf("after Capstan's local sync: v=%s", v)
	}
	if out := f.expect(1, "app", "diff", "synclocal"); !strings.Contains(out, "+  v: git") {
		t.Errorf("diff with Git after a local sync:\n%s", out)
	}
	app := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "synclocal"}, app); err != nil || len(app.Status.History) != 0 {
		t.Errorf("history after local syncs: %v %+v", err, app.Status.History)
	}

	f.expect(0, "app", "set", "synclocal", "--sync-policy", "automated")
	if _, _, stderr := f.run("app", "sync", "synclocal", "--local", local, "--local-repo-root", local); !strings.Contains(stderr, "cannot use local sync when Automatic Sync Policy is enabled") {
		t.Errorf("local sync of an automated app: %q", stderr)
	}
}
