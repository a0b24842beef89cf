package commands

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestRepoCommandsWriteArgoCDSecrets adds, lists and removes repositories
// and credential templates, checking the Secrets written and that no
// password ever comes back.
func TestRepoCommandsWriteArgoCDSecrets(t *testing.T) {
	overBothAPIs(t, repoCommandsWriteArgoCDSecrets)
}

func repoCommandsWriteArgoCDSecrets(t *testing.T, flags ...string) {
	f := startCapstan(t, false)
	f.flags = flags
	f.login()
	ctx := context.Background()
	secrets := func(kind string) []corev1.Secret {
		t.Helper()
		list := &corev1.SecretList{}
		if err := f.c.List(ctx, list, client.InNamespace(f.ns), client.MatchingLabels{v1alpha1.LabelSecretType: kind}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	server := gitserver.New(t) // every request needs basic auth
	repo := server.NewRepo(t, "app")
	repo.Commit(t, "one", map[string]string{"README": "app"})
	url := repo.URL
	if code, _, errOut := f.run("repo", "add", url, "--username", server.Username, "--password", "wrong", "--project", "default"); code != 1 ||
		!strings.Contains(errOut, "unable to connect to repository") {
		t.Errorf("adding a repository with a wrong password: %d %s", code, errOut)
	}
	if n := len(secrets(v1alpha1.SecretTypeRepository)); n != 0 {
		t.Errorf("a repository that could not be reached was stored (%d Secrets)", n)
	}
	if code, _, errOut := f.run("repo", "add", url, "--insecure-oci-force-http"); code != 1 || !strings.Contains(errOut, "requires --type oci or --enable-oci") {
		t.Errorf("--insecure-oci-force-http for a Git repository: %d %s", code, errOut)
	}
	if code, out, errOut := f.run("repo", "add", url, "--username", server.Username, "--password", server.Password, "--project", "default",
		"--depth", "2", "--webhook-manifest-cache-warm-disabled", "--enable-lfs"); code != 0 {
		t.Fatalf("repo add: %d %s%s", code, out, errOut)
	}
	repos := secrets(v1alpha1.SecretTypeRepository)
	if len(repos) != 1 || !strings.HasPrefix(repos[0].Name, "repo-") || string(repos[0].Data["url"]) != url ||
		string(repos[0].Data["password"]) != server.Password || string(repos[0].Data["project"]) != "default" ||
		string(repos[0].Data["depth"]) != "2" || string(repos[0].Data["webhookManifestCacheWarmDisabled"]) != "true" || string(repos[0].Data["enableLfs"]) != "true" {
		t.Fatalf("repository Secret: %+v", repos)
	}
	if code, _, errOut := f.run("repo", "add", url, "--username", server.Username, "--password", server.Password, "--project", "default", "--name", "other"); code != 1 ||
		!strings.Contains(errOut, "use upsert flag") {
		t.Errorf("adding a different repository again without --upsert: %d %s", code, errOut)
	}
	if code, _, _ := f.run("repo", "add", url, "--username", server.Username, "--password", server.Password, "--project", "default", "--name", "other", "--upsert"); code != 0 {
		t.Error("repo add --upsert failed")
	}
	code, out, _ := f.run("repo", "list", "-o", "json")
	if code != 0 || !strings.Contains(out, url) || !strings.Contains(out, `"name": "other"`) || strings.Contains(out, server.Password) {
		t.Errorf("repo list shows the repository and no password:\n%s", out)
	}
	if code, out, errOut := f.run("repocreds", "add", "https://git.example.com/team", "--username", "git", "--password", "tmpl"); code != 0 {
		t.Fatalf("repocreds add: %d %s%s", code, out, errOut)
	}
	if creds := secrets(v1alpha1.SecretTypeRepoCredentials); len(creds) != 1 || !strings.HasPrefix(creds[0].Name, "creds-") {
		t.Errorf("credential template Secret: %+v", creds)
	}
	if code, out, _ := f.run("repocreds", "list"); code != 0 || !strings.Contains(out, "https://git.example.com/team") {
		t.Errorf("repocreds list:\n%s", out)
	}
	for _, args := range [][]string{{"repo", "rm", url}, {"repocreds", "rm", "https://git.example.com/team"}} {
		if code, out, errOut := f.run(args...); code != 0 {
			t.Errorf("%v: %d %s%s", args, code, out, errOut)
		}
	}
	if n := len(secrets(v1alpha1.SecretTypeRepository)) + len(secrets(v1alpha1.SecretTypeRepoCredentials)); n != 0 {
		t.Errorf("%d Secrets left after rm", n)
	}
	if code, _, errOut := f.run("repo", "rm", url); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("removing a missing repository: %d %s", code, errOut)
	}
}
