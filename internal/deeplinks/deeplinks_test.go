package deeplinks

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

func ptr(s string) *string { return &s }

func TestEvaluate(t *testing.T) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: "argocd",
		Annotations: map[string]string{"team": "web"}}, Spec: v1alpha1.ApplicationSpec{Project: "default"}}
	data := Data{}
	if err := data.Set(KeyApplication, app); err != nil {
		t.Fatal(err)
	}
	data[KeyApp] = data[KeyApplication]
	_ = data.Set(KeyCluster, map[string]any{"name": "in-cluster", "server": "https://kubernetes.default.svc"})
	for _, tc := range []struct {
		name    string
		link    settings.DeepLink
		want    string // the URL, "" when left out
		wantErr string
	}{
		{"plain template", settings.DeepLink{URL: "https://logs/{{.app.metadata.name}}"}, "https://logs/guestbook", ""},
		{"sprig", settings.DeepLink{URL: "https://x/{{ .application.metadata.name | upper }}?c={{.cluster.name}}"}, "https://x/GUESTBOOK?c=in-cluster", ""},
		{"condition true", settings.DeepLink{URL: "https://x", If: ptr(`application.spec.project == "default"`)}, "https://x", ""},
		{"condition false", settings.DeepLink{URL: "https://x", If: ptr(`app.metadata.annotations.team == "db"`)}, "", ""},
		{"condition not a boolean", settings.DeepLink{URL: "https://x", If: ptr(`app.metadata.annotations.team`)}, "", "evaluated to non-boolean value for resource guestbook"},
		{"condition broken", settings.DeepLink{URL: "https://x", If: ptr(`app.(`)}, "", "failed to evaluate link condition"},
		{"template broken", settings.DeepLink{URL: "https://x/{{.app"}, "", "failed to parse link template"},
		{"environment not readable", settings.DeepLink{URL: `{{ env "HOME" }}`}, "", "failed to parse link template"},
		{"runaway template", settings.DeepLink{URL: `{{ repeat 100000 "x" }}`}, "", "longer than"},
	} {
		tc.link.Title = tc.name
		links, err := Evaluate([]settings.DeepLink{tc.link}, data, "guestbook")
		got := ""
		if len(links) == 1 {
			got = links[0].URL
		}
		if got != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: %q, %v; want %q, error with %q", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// A link to the team's dashboard, only for apps of the default project.
func ExampleEvaluate() {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook"}, Spec: v1alpha1.ApplicationSpec{Project: "default"}}
	data := Data{}
	_ = data.Set(KeyApplication, app)
	cond := `application.spec.project == "default"`
	links, err := Evaluate([]settings.DeepLink{
		{Title: "Dashboard", URL: "https://grafana.example.com/d/apps?var-app={{.application.metadata.name}}", If: &cond},
	}, data, app.Name)
	fmt.Println(links[0].Title, links[0].URL, err)
	// Output: Dashboard https://grafana.example.com/d/apps?var-app=guestbook <nil>
}
