package commands

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestProjAndAccountCommands builds a project with a role through the
// CLI, uses the role's token, revokes it, and manages accounts.
func TestProjAndAccountCommands(t *testing.T) { overBothAPIs(t, projAndAccountCommands) }

func projAndAccountCommands(t *testing.T, flags ...string) {
	f := startCapstan(t, false)
	f.flags = flags
	f.login()
	ctx := context.Background()
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.image-updater": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	expect := f.expect
	expect(0, "proj", "create", "team-a", "--description", "Team A", "--dest", "https://kubernetes.default.svc,team-a")
	expect(0, "proj", "add-source", "team-a", "https://github.com/team-a/*")
	expect(0, "proj", "add-destination", "team-a", "https://kubernetes.default.svc", "team-a-staging")
	expect(0, "proj", "allow-cluster-resource", "team-a", "", "Namespace")
	expect(0, "proj", "role", "create", "team-a", "ci")
	expect(0, "proj", "role", "add-policy", "team-a", "ci", "--action", "get", "--object", "*")
	expect(0, "proj", "role", "add-policy", "team-a", "ci", "--action", "sync", "--object", "*")
	p := &v1alpha1.AppProject{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "team-a"}, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.SourceRepos) != 1 || len(p.Spec.Destinations) != 2 || len(p.Spec.ClusterResourceWhitelist) != 1 ||
		len(p.Spec.Roles) != 1 || p.Spec.Roles[0].Policies[1] != "p, proj:team-a:ci, applications, sync, team-a/*, allow" {
		t.Fatalf("project: %+v", p.Spec)
	}
	if out := expect(0, "proj", "get", "team-a"); !strings.Contains(out, "https://github.com/team-a/*") || !strings.Contains(out, "ci (2 policies, 0 tokens)") {
		t.Errorf("proj get:\n%s", out)
	}
	for _, a := range []struct{ name, project string }{{"mine", "team-a"}, {"theirs", "default"}} {
		if err := f.c.Create(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: a.project, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "team-a"},
				Source: &v1alpha1.ApplicationSource{RepoURL: "https://github.com/team-a/x.git", Path: "x"}}}); err != nil {
			t.Fatal(err)
		}
	}
	token := strings.TrimSpace(expect(0, "proj", "role", "create-token", "team-a", "ci", "--id", "pipeline", "--expires-in", "1h", "--token-only"))
	if out := expect(0, "app", "list", "-o", "name", "--auth-token", token); strings.TrimSpace(out) != f.ns+"/mine" {
		t.Errorf("the role token lists %q, want only its project's app", out)
	}
	if out := expect(0, "account", "can-i", "sync", "applications", "team-a/mine", "--auth-token", token); strings.TrimSpace(out) != "yes" {
		t.Errorf("can-i sync as the role: %q", out)
	}
	if out := expect(0, "account", "can-i", "delete", "applications", "team-a/mine", "--auth-token", token); strings.TrimSpace(out) != "no" {
		t.Errorf("can-i delete as the role: %q", out)
	}
	expect(0, "proj", "role", "delete-token", "team-a", "ci", "pipeline")
	expect(1, "app", "list", "--auth-token", token)
	expect(1, "proj", "delete", "team-a") // still used by an Application

	if out := expect(0, "account", "get-user-info"); !strings.Contains(out, "Username: admin") {
		t.Errorf("get-user-info:\n%s", out)
	}
	if out := expect(0, "account", "list"); !strings.Contains(out, "image-updater") || !strings.Contains(out, "apiKey") {
		t.Errorf("account list:\n%s", out)
	}
	apiKey := strings.TrimSpace(expect(0, "account", "generate-token", "--account", "image-updater", "--id", "updater"))
	if out := expect(0, "account", "get-user-info", "--auth-token", apiKey); !strings.Contains(out, "Username: image-updater") {
		t.Errorf("the API key's user:\n%s", out)
	}
	expect(0, "account", "delete-token", "updater", "--account", "image-updater")
	expect(1, "app", "list", "--auth-token", apiKey)
	expect(1, "account", "update-password", "--current-password", "wrong", "--new-password", "longenough1")
	// Token times are whole seconds: change the password in a later second
	// than the session was issued in, so the session visibly predates it.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	expect(0, "account", "update-password", "--current-password", f.password, "--new-password", "longenough1")
	expect(1, "app", "list") // the session predates the new password
}

// TestProjEditCommands edits every part of a project with the CLI's
// Argo CD commands (windows, roles, lists, kinds, set), checks the stored
// AppProject, and reads the windows back with Argo CD's own CLI.
func TestProjEditCommands(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	expect := f.expect
	expect(0, "proj", "create", "team-b", "--src", "https://github.com/team-b/*", "--dest", "https://kubernetes.default.svc,team-b",
		"--allow-namespaced-resource", "apps/Deployment", "--orphaned-resources")
	expect(0, "proj", "windows", "add", "team-b", "--kind", "deny", "--schedule", "0 22 * * *", "--duration", "8h", "--applications", "*", "--time-zone", "Europe/Paris")
	expect(0, "proj", "windows", "add", "team-b", "--kind", "allow", "--schedule", "* * * * *", "--duration", "1h", "--namespaces", "team-b")
	expect(1, "proj", "windows", "add", "team-b", "--kind", "deny", "--schedule", "not a schedule", "--duration", "1h")
	expect(0, "proj", "windows", "update", "team-b", "0", "--duration", "4h")
	expect(0, "proj", "windows", "enable-manual-sync", "team-b", "0")
	if out := expect(0, "proj", "windows", "list", "team-b"); !strings.Contains(out, "Active") || !strings.Contains(out, "Europe/Paris") {
		t.Errorf("windows list:\n%s", out)
	}
	expect(0, "proj", "windows", "delete", "team-b", "1")
	expect(1, "proj", "windows", "delete", "team-b", "7")
	expect(0, "proj", "role", "create", "team-b", "deployer", "--description", "deploys")
	expect(0, "proj", "role", "add-policy", "team-b", "deployer", "-a", "sync", "-o", "*")
	expect(0, "proj", "role", "add-policy", "team-b", "deployer", "-a", "get", "-o", "*", "-r", "logs")
	expect(0, "proj", "role", "remove-policy", "team-b", "deployer", "-a", "sync", "-o", "*")
	expect(0, "proj", "role", "add-group", "team-b", "deployer", "team-b-admins")
	expect(1, "proj", "role", "add-group", "team-b", "deployer", "team-b-admins")
	if out := expect(0, "proj", "role", "get", "team-b", "deployer"); !strings.Contains(out, "p, proj:team-b:deployer, logs, get, team-b/*, allow") || !strings.Contains(out, "team-b-admins") {
		t.Errorf("role get:\n%s", out)
	}
	expect(0, "proj", "role", "create-token", "team-b", "deployer", "--id", "one")
	if out := expect(0, "proj", "role", "list-tokens", "team-b", "deployer"); !strings.Contains(out, "one") {
		t.Errorf("role list-tokens:\n%s", out)
	}
	if out := expect(0, "proj", "role", "list", "team-b"); !strings.Contains(out, "deployer") {
		t.Errorf("role list:\n%s", out)
	}
	expect(0, "proj", "add-orphaned-ignore", "team-b", "", "ConfigMap", "--name", "kube-root-ca.crt")
	expect(0, "proj", "add-signature-key", "team-b", "4AEE18F83AFDEB23")
	expect(1, "proj", "add-signature-key", "team-b", "4AEE18F83AFDEB23")
	expect(0, "proj", "add-source-namespace", "team-b", "team-b-apps")
	expect(0, "proj", "add-destination-service-account", "team-b", "https://kubernetes.default.svc", "team-b", "deployer")
	expect(0, "proj", "remove-source", "team-b", "https://github.com/team-b/*")
	expect(1, "proj", "remove-source", "team-b", "https://github.com/nobody/*")
	expect(0, "proj", "add-destination", "team-b", "in-cluster", "team-b-*", "--name")
	expect(0, "proj", "deny-cluster-resource", "team-b", "rbac.authorization.k8s.io", "ClusterRole", "--list", "deny")
	expect(0, "proj", "deny-namespace-resource", "team-b", "apps", "Deployment")
	expect(0, "proj", "set", "team-b", "--description", "Team B")

	p := &v1alpha1.AppProject{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "team-b"}, p); err != nil {
		t.Fatal(err)
	}
	s := p.Spec
	if s.Description != "Team B" || len(s.SourceRepos) != 0 || len(s.SyncWindows) != 1 || s.SyncWindows[0].Duration != "4h" || !s.SyncWindows[0].ManualSync ||
		len(s.Roles) != 1 || len(s.Roles[0].Policies) != 1 || len(s.Roles[0].Groups) != 1 || s.OrphanedResources == nil || len(s.OrphanedResources.Ignore) != 1 ||
		len(s.SignatureKeys) != 1 || len(s.SourceNamespaces) != 1 || len(s.DestinationServiceAccounts) != 1 || len(s.Destinations) != 2 ||
		s.Destinations[1].Name != "in-cluster" || len(s.ClusterResourceBlacklist) != 1 || len(s.NamespaceResourceWhitelist) != 0 {
		t.Errorf("the edited project: %+v", s)
	}
	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	if out := argocd.Expect(0, "proj", "windows", "list", "team-b"); !strings.Contains(out, "0 22 * * *") || !strings.Contains(out, "Enabled") {
		t.Errorf("Argo CD's proj windows list:\n%s", out)
	}
}

// TestProjSourceIntegrityCommands: proj source-integrity git policies
// adds, lists, updates and deletes a project's signature policies as
// Argo CD 3.5's CLI does, and refuses bad key IDs, modes and IDs.
func TestProjSourceIntegrityCommands(t *testing.T) {
	f := startCapstan(t, false)
	f.login()
	policies := []string{"proj", "source-integrity", "git", "policies"}
	run := func(want int, args ...string) string {
		t.Helper()
		return f.expect(want, append(slices.Clone(policies), args...)...)
	}
	if code, _, errOut := f.run(append(slices.Clone(policies), "list", "default")...); code == 0 || !strings.Contains(errOut, `no source integrity git policies defined for project "default"`) {
		t.Errorf("list without policies: %d %s", code, errOut)
	}
	out := run(0, "add", "default", "--repo-url", "https://github.com/team-a/*", "--gpg-mode", "strict", "--gpg-key", "d56c4fca57a46444")
	if !strings.Contains(out, "0   strict    D56C4FCA57A46444  https://github.com/team-a/*") {
		t.Errorf("add:\n%s", out)
	}
	run(0, "add", "default", "--repo-url", "https://github.com/team-b/*", "--gpg-mode", "head", "--gpg-key", "0123456789ABCDEF0123456789ABCDEF01234567")
	for _, bad := range [][]string{{"add", "default", "--gpg-mode", "sometimes"}, {"add", "default", "--gpg-mode", "head", "--gpg-key", "xyz"},
		{"update", "default", "7", "--gpg-mode", "none", "--yes"}, {"delete", "default", "x", "--yes"}} {
		if code, _, _ := f.run(append(slices.Clone(policies), bad...)...); code == 0 {
			t.Errorf("%v was accepted", bad)
		}
	}
	run(0, "update", "default", "0", "--add-repo-url", "https://github.com/team-c/*", "--delete-gpg-key", "D56C4FCA57A46444", "--add-gpg-key", "1111222233334444", "--yes")
	p := &v1alpha1.AppProject{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "default"}, p); err != nil {
		t.Fatal(err)
	}
	got := p.Spec.SourceIntegrity.Git.Policies
	if len(got) != 2 || len(got[0].Repos) != 2 || got[0].Repos[1].URL != "https://github.com/team-c/*" ||
		!slices.Equal(got[0].GPG.Keys, []string{"1111222233334444"}) || !slices.Equal(got[1].GPG.Keys, []string{"89ABCDEF01234567"}) {
		t.Errorf("policies after update: %+v", got)
	}
	run(0, "delete", "default", "0", "1", "--yes")
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "default"}, p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.SourceIntegrity != nil {
		t.Errorf("source integrity after deleting every policy: %+v", p.Spec.SourceIntegrity)
	}
}
