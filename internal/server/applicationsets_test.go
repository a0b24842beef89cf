package server

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
