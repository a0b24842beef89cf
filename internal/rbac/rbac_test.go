package rbac

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

// imageUpdaterPolicy is the restricted role Argo CD Image Updater's
// documentation gives its account.
var imageUpdaterPolicy = map[string]string{
	"policy.default": "role:readonly",
	"policy.csv": `# roles and scopes
p, role:image-updater, applications, get, */*, allow
p, role:image-updater, applications, update, */*, allow
g, image-updater, role:image-updater
`,
}

type check struct {
	subjects []string
	resource Resource
	action   Action
	obj      string
	want     bool
}

func run(t *testing.T, e *Enforcer, checks []check) {
	t.Helper()
	for _, c := range checks {
		if got := e.Enforce(c.subjects, c.resource, c.action, c.obj); got != c.want {
			t.Errorf("%v %s %s %s = %v, want %v", c.subjects, c.resource, c.action, c.obj, got, c.want)
		}
	}
}

func TestImageUpdaterPolicyFromTheCluster(t *testing.T) {
	localcluster.Need(t)
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t)
	if err := c.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: ns}, Data: imageUpdaterPolicy}); err != nil {
		t.Fatal(err)
	}
	p, err := Load(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	run(t, e, []check{
		{[]string{"image-updater"}, "applications", "get", "default/guestbook", true},
		{[]string{"image-updater"}, "applications", "update", "team/web", true},
		{[]string{"image-updater"}, "applications", "delete", "team/web", false},
		{[]string{"image-updater"}, "applications", "sync", "team/web", false},
		{[]string{"image-updater"}, "clusters", "update", "https://k", false},
		// policy.default gives everyone role:readonly.
		{[]string{"someone"}, "projects", "get", "default", true},
		{[]string{"someone"}, "applications", "create", "default/x", false},
		// The built-in admin account.
		{[]string{"admin"}, "applications", "delete", "any/thing", true},
		{[]string{"admin"}, "applications", "action/apps/Deployment/restart", "any/thing", true},
		{[]string{"admin"}, "exec", "create", "p/a", true},
	})
	// Without argocd-rbac-cm only the built-in roles apply: nobody reads.
	p, err = Load(context.Background(), c, cluster.NewNamespace(t))
	if err != nil {
		t.Fatal(err)
	}
	e, _ = New(p)
	run(t, e, []check{
		{[]string{"someone"}, "applications", "get", "default/x", false},
		{[]string{"admin"}, "applications", "get", "default/x", true},
	})
}

func TestGroupsDenyAndRegex(t *testing.T) {
	e, err := New(Policy{Scopes: []string{"groups", "email"}, CSV: `
p, role:team-a, applications, *, team-a/*, allow
p, role:team-a, applications, delete, team-a/prod-*, deny
g, my-org:team-a, role:team-a
p, carol@example.com, applications, sync, */*, allow
`})
	if err != nil {
		t.Fatal(err)
	}
	subjects := e.Subjects(map[string]any{"sub": "alice", "groups": []any{"my-org:team-a", 7}, "email": "alice@example.com"})
	if strings.Join(subjects, ",") != "alice,my-org:team-a,alice@example.com" {
		t.Errorf("subjects = %v", subjects)
	}
	run(t, e, []check{
		{subjects, "applications", "sync", "team-a/web", true},
		{subjects, "applications", "delete", "team-a/web", true},
		{subjects, "applications", "delete", "team-a/prod-web", false}, // deny wins
		{subjects, "applications", "get", "team-b/web", false},
		{e.Subjects(map[string]any{"sub": "carol", "email": "carol@example.com"}), "applications", "sync", "x/y", true},
	})

	re, err := New(Policy{MatchMode: "regex", CSV: `p, dev, applications, (get|sync), dev-[0-9]+/.*, allow`})
	if err != nil {
		t.Fatal(err)
	}
	run(t, re, []check{
		{[]string{"dev"}, "applications", "sync", "dev-12/web", true},
		{[]string{"dev"}, "applications", "delete", "dev-12/web", false},
		{[]string{"dev"}, "applications", "get", "dev-x/web", false},
	})
}

func TestMalformedPolicies(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{CSV: "p, role:x, applications, get"}, `policy.csv line 1: "p, role:x, applications, get" is neither`},
		{Policy{CSV: "\n\nq, a, b"}, "policy.csv line 3"},
		{Policy{CSV: "p, a, applications, get, */*, maybe"}, "policy.csv line 1"},
		{Policy{MatchMode: "fuzzy"}, `policy.matchMode is "fuzzy"`},
	} {
		if _, err := New(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.p, err, tc.want)
		}
	}
}
