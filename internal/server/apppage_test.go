package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func TestPageTake(t *testing.T) {
	t.Parallel()
	var apps []*v1alpha1.Application
	for _, name := range []string{"f", "b", "d", "a", "e", "c"} {
		apps = append(apps, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"}})
	}
	names := func(apps []*v1alpha1.Application) string {
		var out []string
		for _, a := range apps {
			out = append(out, a.Name)
		}
		return fmt.Sprint(out)
	}
	var checked []string
	visible := func(app *v1alpha1.Application) bool {
		checked = append(checked, app.Name)
		return app.Name != "c" && app.Name != "d"
	}
	after := func(name string) *kube.NameKey { return &kube.NameKey{Name: name, Namespace: "argocd"} }
	for _, tc := range []struct {
		page          listPage
		want, checked string
		more          bool
	}{
		{listPage{}, "[a b e f]", "[a b c d e f]", false},
		{listPage{limit: 2}, "[a b]", "[a b c d e]", true}, // to know a visible one follows
		{listPage{limit: 2, after: after("b")}, "[e f]", "[c d e f]", false},
		{listPage{limit: 3, after: after("a")}, "[b e f]", "[b c d e f]", false},
		{listPage{after: after("f")}, "[]", "[]", false},
		{listPage{limit: 1, after: after("bb")}, "[e]", "[c d e f]", true},
	} {
		checked = nil
		got, next := tc.page.take(inOrder(slices.Clone(apps), tc.page.after), visible)
		if names(got) != tc.want || fmt.Sprint(checked) != tc.checked || (next != "") != tc.more {
			t.Errorf("%+v: got %s (checked %v, next %q), want %s (checked %s, more %v)", tc.page, names(got), checked, next, tc.want, tc.checked, tc.more)
		}
	}
}

// TestApplicationListPages: limit and continue page through the list in
// its order; bad ones are refused.
func TestApplicationListPages(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := serve(t, Options{Insecure: true}, true)
	token := f.adminToken()
	ctx := context.Background()
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("app-%d", 6-i)
		want = append(want, name)
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "apps", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "apps"},
		}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	var all v1alpha1.ApplicationList
	f.pollCall(t, "GET", "/api/v1/applications", token, &all, func() bool { return len(all.Items) == 7 })
	var got []string
	var sizes []int
	next := ""
	for range 4 {
		var list v1alpha1.ApplicationList
		if code := f.call("GET", "/api/v1/applications?limit=3&continue="+next, "", token, &list); code != 200 {
			t.Fatalf("a page answered %d", code)
		}
		sizes = append(sizes, len(list.Items))
		for _, a := range list.Items {
			got = append(got, a.Name)
		}
		if next = list.Continue; next == "" {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(sizes) != "[3 3 1]" {
		t.Errorf("pages of 3 gave %v in pages of %v, want %v in [3 3 1]", got, sizes, want)
	}
	for _, query := range []string{"limit=-1", "limit=x", "continue=%25%25", "continue=" + strings.Repeat("A", 600)} {
		var out map[string]any
		if code := f.call("GET", "/api/v1/applications?"+query, "", token, &out); code != 400 {
			t.Errorf("%.40s: answered %d, want 400", query, code)
		}
	}
}
