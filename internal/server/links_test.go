package server

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestDeepLinksGlobalProjectsAndEvents: argocd-cm's deep links are
// evaluated for an app, its resources and its project (conditions, sprig,
// a broken link left out); globalProjects gives a project the settings of
// the global project that selects it, which its apps are held to; the
// API's own actions show as Events of the app and the project, an app's
// with the labels resource.includeEventLabelKeys asks for.
func TestDeepLinksGlobalProjectsAndEvents(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	admin := f.adminToken()
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"application.links": `
- url: https://logs.example.com/{{.app.metadata.name}}?cluster={{.cluster.name}}
  title: Logs
  icon.class: fa-book
- url: https://x/{{ .application.spec.project | upper }}
  title: Only team apps
  if: application.spec.project == "team"
- url: https://broken/{{.app
  title: Broken
`,
		"resource.links": `
- url: https://k8s.example.com/{{.resource.kind}}/{{.resource.metadata.name}}?app={{.application.metadata.name}}
  title: Object
`,
		"project.links": `
- url: https://wiki.example.com/teams/{{.project.metadata.name}}
  title: Team wiki
`,
		"resource.includeEventLabelKeys": "tier, team-*",
		"resource.excludeEventLabelKeys": "team-secret",
		"globalProjects": `
- projectName: shared
  labelSelector:
    matchLabels:
      tier: team
`,
	}}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"project":{"metadata":{"name":"shared"},"spec":{"sourceRepos":["https://git.example.com/shared/*"]}}}`,
		`{"project":{"metadata":{"name":"team","labels":{"tier":"team"}},"spec":{"sourceRepos":["https://git.example.com/team/*"],"destinations":[{"server":"*","namespace":"*"}]}}}`,
	} {
		if code := f.call("POST", "/api/v1/projects", body, admin, nil); code != 200 {
			t.Fatalf("creating a project: %d", code)
		}
	}
	// The global project's repositories are allowed to the team's apps.
	app := `{"metadata":{"name":"web","labels":{"team-name":"pay","team-secret":"x","other":"y"}},"spec":{"project":"team","source":{"repoURL":"https://git.example.com/shared/base.git","path":"."},"destination":{"name":"in-cluster","namespace":"web"}}}`
	if code := f.call("POST", "/api/v1/applications", app, admin, nil); code != 200 {
		t.Fatalf("creating an app from the global project's repository: %d", code)
	}
	var refused map[string]any
	other := strings.Replace(app, "shared/base", "elsewhere/x", 1)
	if code := f.call("POST", "/api/v1/applications", strings.Replace(other, `"web"}`, `"other"}`, 1), admin, &refused); code != 400 {
		t.Errorf("an app from a repository neither project allows: %d %v", code, refused)
	}
	var globals struct{ Items []v1alpha1.AppProject }
	if f.call("GET", "/api/v1/projects/team/globalprojects", "", admin, &globals); len(globals.Items) != 1 || globals.Items[0].Name != "shared" {
		t.Errorf("global projects of team: %+v", globals.Items)
	}

	type links struct {
		Items []struct{ Title, URL, IconClass string }
	}
	var got links
	f.call("GET", "/api/v1/applications/web/links", "", admin, &got)
	if len(got.Items) != 2 || got.Items[0].URL != "https://logs.example.com/web?cluster=in-cluster" || got.Items[0].IconClass != "fa-book" ||
		got.Items[1].URL != "https://x/TEAM" {
		t.Errorf("app links: %+v", got.Items)
	}
	got = links{}
	f.call("GET", "/api/v1/applications/web/resource/links?kind=Application&group=argoproj.io&resourceName=web", "", admin, &got)
	if len(got.Items) != 1 || got.Items[0].URL != "https://k8s.example.com/Application/web?app=web" {
		t.Errorf("resource links of the app itself: %+v", got.Items)
	}
	got = links{}
	f.call("GET", "/api/v1/projects/team/links", "", admin, &got)
	if len(got.Items) != 1 || got.Items[0].URL != "https://wiki.example.com/teams/team" {
		t.Errorf("project links: %+v", got.Items)
	}

	// The app's Event carries the labels argocd-cm asks for, its
	// project's (tier) among them.
	var appEvents corev1.EventList
	f.pollCall(t, "GET", "/api/v1/applications/web/events", admin, &appEvents, func() bool { return len(appEvents.Items) > 0 })
	if l := appEvents.Items[0].Labels; len(l) != 2 || l["team-name"] != "pay" || l["tier"] != "team" {
		t.Errorf("labels of the app's Event: %v, want team-name and tier", l)
	}
	f.call("DELETE", "/api/v1/applications/web?cascade=false", "", admin, nil)
	var events corev1.EventList
	f.pollCall(t, "GET", "/api/v1/projects/team/events", admin, &events, func() bool {
		return len(events.Items) == 1 && events.Items[0].Message == "admin created project" && events.Items[0].Reason == "ResourceCreated"
	})
}
