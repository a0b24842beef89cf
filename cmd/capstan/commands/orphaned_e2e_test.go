package commands

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestOrphanedResources: with a project that monitors orphaned resources,
// the resource tree lists the objects of the app's namespace no app
// tracks (but those the project ignores, and those Kubernetes puts in
// every namespace), and app resources shows them as Argo CD's does.
func TestOrphanedResources(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.login()
	ctx := context.Background()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	f.expect(0, "proj", "create", "watched", "--src", "*", "--dest", "*,*", "--orphaned-resources")
	f.expect(0, "proj", "add-orphaned-ignore", "watched", "", "ConfigMap", "--name", "ignored-*")
	f.expect(0, "app", "create", "web", "--project", "watched", "--repo", remote.URL, "--path", "app", "--revision", "main",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	f.expect(0, "app", "sync", "web", "--timeout", "60")
	for _, name := range []string{"stray", "ignored-cache"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: name}}
		if err := f.c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	out := f.expect(0, "app", "resources", "web")
	for _, want := range []string{"ConfigMap  " + dest + "  settings  No", "ConfigMap  " + dest + "  stray     Yes"} {
		if !strings.Contains(out, want) {
			t.Errorf("app resources lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"ignored-cache", "kube-root-ca.crt", "ServiceAccount"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("app resources lists %s:\n%s", unwanted, out)
		}
	}
	if out := f.expect(0, "app", "resources", "web", "--orphaned"); strings.Contains(out, "settings") || !strings.Contains(out, "stray") {
		t.Errorf("app resources --orphaned:\n%s", out)
	}

	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	if out := argocd.Expect(0, "app", "resources", "web", "--orphaned"); !strings.Contains(out, "stray") || strings.Contains(out, "settings") {
		t.Errorf("Argo CD's app resources --orphaned:\n%s", out)
	}
}
