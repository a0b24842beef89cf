package server

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestApplicationSetAPI creates, reads, lists and deletes ApplicationSets
// through Argo CD's REST paths, with RBAC on the template's project.
func TestApplicationSetAPI(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.viewer": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns},
		Data: map[string]string{"policy.csv": "p, viewer, applicationsets, get, default/*, allow"}}); err != nil {
		t.Fatal(err)
	}
	admin, viewer := f.adminToken(), f.apiKey("viewer")
	set := func(project, path string) string {
		return `{"metadata":{"name":"guestbook"},"spec":{"generators":[{"list":{"elements":[{"env":"dev"}]}}],` +
			`"template":{"metadata":{"name":"{{env}}-guestbook"},"spec":{"project":"` + project + `",` +
			`"source":{"repoURL":"https://git.example/r","path":"` + path + `"},"destination":{"server":"https://kubernetes.default.svc","namespace":"x"}}}}}`
	}

	if code := f.call("POST", "/api/v1/applicationsets", set("default", "guestbook"), viewer, nil); code != 403 {
		t.Errorf("viewer creates: %d, want 403", code)
	}
	// The tenant review: a templated project would make the RBAC object
	// the caller's choice.
	if code := f.call("POST", "/api/v1/applicationsets", set("{{env}}", "guestbook"), admin, nil); code != 400 {
		t.Errorf("a templated project: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/applicationsets", set("nope", "guestbook"), admin, nil); code != 404 {
		t.Errorf("a missing project: %d, want 404", code)
	}
	var created v1alpha1.ApplicationSet
	if code := f.call("POST", "/api/v1/applicationsets?dryRun=true", set("default", "guestbook"), admin, &created); code != 200 || created.Name != "guestbook" {
		t.Fatalf("dry run: %d %+v", code, created)
	}
	if code := f.call("GET", "/api/v1/applicationsets/guestbook", "", admin, nil); code != 404 {
		t.Errorf("a dry run stored the ApplicationSet: %d", code)
	}
	if code := f.call("POST", "/api/v1/applicationsets", set("default", "guestbook"), admin, &created); code != 200 || created.UID == "" {
		t.Fatalf("create: %d %+v", code, created)
	}
	if code := f.call("POST", "/api/v1/applicationsets", set("default", "other"), admin, nil); code != 400 {
		t.Errorf("a different spec without upsert: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/applicationsets?upsert=true", set("default", "other"), admin, &created); code != 200 ||
		created.Spec.Template.Spec.Source.Path != "other" {
		t.Errorf("upsert: %d %+v", code, created.Spec.Template.Spec.Source)
	}

	var got v1alpha1.ApplicationSet
	if code := f.call("GET", "/api/v1/applicationsets/guestbook", "", viewer, &got); code != 200 || got.Spec.Template.Name != "{{env}}-guestbook" {
		t.Errorf("viewer gets: %d %+v", code, got.Spec.Template)
	}
	var list v1alpha1.ApplicationSetList
	if code := f.call("GET", "/api/v1/applicationsets?projects=default", "", viewer, &list); code != 200 || len(list.Items) != 1 {
		t.Errorf("list: %d %d items", code, len(list.Items))
	}
	if f.call("GET", "/api/v1/applicationsets?projects=other", "", admin, &list); len(list.Items) != 0 {
		t.Errorf("list by another project: %d items", len(list.Items))
	}
	if code := f.call("DELETE", "/api/v1/applicationsets/guestbook", "", viewer, nil); code != 403 {
		t.Errorf("viewer deletes: %d, want 403", code)
	}
	if code := f.call("DELETE", "/api/v1/applicationsets/guestbook", "", admin, nil); code != 200 {
		t.Errorf("delete: %d", code)
	}
	if code := f.call("GET", "/api/v1/applicationsets/Bad_Name", "", admin, nil); code != 400 {
		t.Errorf("an invalid name: %d, want 400", code)
	}
}

// TestApplicationSetGenerate: Generate renders the Applications a set
// would make without writing any, for a caller who may create the set;
// ResourceTree lists the Applications a stored set made.
func TestApplicationSetGenerate(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	admin := f.adminToken()
	body := func(project string) string {
		return `{"applicationSet":{"metadata":{"name":"envs"},"spec":{"generators":[{"list":{"elements":[{"env":"dev"},{"env":"prod"}]}}],` +
			`"template":{"metadata":{"name":"{{env}}-guestbook"},"spec":{"project":"` + project + `",` +
			`"source":{"repoURL":"https://git.example/r","path":"{{env}}"},"destination":{"server":"https://kubernetes.default.svc","namespace":"{{env}}"}}}}}}`
	}
	var out struct {
		Applications []v1alpha1.Application `json:"applications"`
	}
	if code := f.call("POST", "/api/v1/applicationsets/generate", body("default"), admin, &out); code != 200 || len(out.Applications) != 2 {
		t.Fatalf("generate: %d %+v", code, out)
	}
	if a := out.Applications[1]; a.Name != "prod-guestbook" || a.Namespace != f.ns || a.Spec.Source.Path != "prod" || a.Spec.Destination.Namespace != "prod" {
		t.Errorf("generated %+v", a)
	}
	var apps v1alpha1.ApplicationList
	if err := f.c.List(ctx, &apps, client.InNamespace(f.ns)); err != nil || len(apps.Items) != 0 {
		t.Errorf("generate wrote Applications: %d %v", len(apps.Items), err)
	}
	if code := f.call("POST", "/api/v1/applicationsets/generate", body("nope"), admin, nil); code != 400 {
		t.Errorf("a missing project: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/applicationsets/generate", `{}`, admin, nil); code != 400 {
		t.Errorf("no ApplicationSet: %d, want 400", code)
	}
	bad := strings.Replace(body("default"), `"list":{"elements":[{"env":"dev"},{"env":"prod"}]}`, `"list":{"elements":[{"env":"dev"},{"env":"dev"}]}`, 1)
	var e struct{ Message string }
	if code := f.call("POST", "/api/v1/applicationsets/generate", bad, admin, &e); code != 400 || !strings.Contains(e.Message, "duplicate name") {
		t.Errorf("duplicate names: %d %q", code, e.Message)
	}

	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "made", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSetSpec{Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{List: &v1alpha1.ListGenerator{}}}}}}
	if err := f.c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	set.Status.Resources = []v1alpha1.ResourceStatus{{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.ApplicationKind, Name: "dev-guestbook",
		Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}}}
	if err := f.c.Status().Update(ctx, set); err != nil {
		t.Fatal(err)
	}
	var tree struct {
		Nodes []struct {
			Kind, Name, Namespace string
			Health                *v1alpha1.HealthStatus
			ParentRefs            []struct{ Kind, Name string }
		}
	}
	if code := f.call("GET", "/api/v1/applicationsets/made/resource-tree", "", admin, &tree); code != 200 || len(tree.Nodes) != 1 {
		t.Fatalf("resource tree: %d %+v", code, tree)
	}
	if n := tree.Nodes[0]; n.Kind != "Application" || n.Name != "dev-guestbook" || n.Namespace != f.ns || n.Health.Status != v1alpha1.HealthStatusHealthy ||
		len(n.ParentRefs) != 1 || n.ParentRefs[0].Name != "made" {
		t.Errorf("node %+v", n)
	}
}
