package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// TestProjAndAccountCommands builds a project with a role through the
// CLI, uses the role's token, revokes it, and manages accounts.
func TestProjAndAccountCommands(t *testing.T) { overBothAPIs(t, projAndAccountCommands) }

func projAndAccountCommands(t *testing.T, flags ...string) {
	f := startCapstan(t, false)
	f.flags = flags
	f.login()
	ctx := context.Background()
	if err := f.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.image-updater": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	expect := f.expect
	expect(0, "proj", "create", "team-a", "--description", "Team A", "--dest", "https://kubernetes.default.svc,team-a")
	expect(0, "proj", "add-source", "team-a", "https://github.com/team-a/*")
	expect(0, "proj", "add-destination", "team-a", "https://kubernetes.default.svc", "team-a-staging")
	expect(0, "proj", "allow-cluster-resource", "team-a", "", "Namespace")
	expect(0, "proj", "role", "create", "team-a", "ci")
	expect(0, "proj", "role", "add-policy", "team-a", "ci", "--action", "get")
	expect(0, "proj", "role", "add-policy", "team-a", "ci", "--action", "sync")
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
	token := strings.TrimSpace(expect(0, "proj", "role", "create-token", "team-a", "ci", "--id", "pipeline", "--expires-in", "1h"))
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
