package server

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestExploreRepositories calls what Argo CD's UI calls while a user
// picks a source, on a real Git repository: branches and tags, the apps
// of a revision, a chart's details, an app's commit metadata; a caller
// without repositories get is refused.
func TestExploreRepositories(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"accounts.dev": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	admin, dev := f.adminToken(), f.apiKey("dev")
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "Add the web chart", map[string]string{
		"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n", "web/values.yaml": "replicas: 2\n",
		"web/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
	})
	remote.Tag(t, "v1")
	repoPath := "/api/v1/repositories/" + url.PathEscape(remote.URL)

	var refs struct{ Branches, Tags []string }
	if code := f.call("GET", repoPath+"/refs", "", admin, &refs); code != 200 || !reflect.DeepEqual(refs.Tags, []string{"v1"}) || len(refs.Branches) != 1 {
		t.Errorf("refs: %d %+v", code, refs)
	}
	if code := f.call("GET", repoPath+"/refs", "", dev, nil); code != 403 {
		t.Errorf("refs without repositories get: %d, want 403", code)
	}
	var apps struct{ Items []struct{ Type, Path string } }
	if code := f.call("GET", repoPath+"/apps?revision=v1&appProject=default&appName=web", "", admin, &apps); code != 200 ||
		len(apps.Items) != 1 || apps.Items[0].Path != "web" || apps.Items[0].Type != "Helm" {
		t.Errorf("apps: %d %+v", code, apps)
	}
	var details struct {
		Type string
		Helm struct {
			ValueFiles []string
			Parameters []v1alpha1.HelmParameter
		}
	}
	body := `{"source":{"repoURL":"` + remote.URL + `","path":"web"},"appName":"web","appProject":"default"}`
	if code := f.call("POST", repoPath+"/appdetails", body, admin, &details); code != 200 || details.Type != "Helm" ||
		!reflect.DeepEqual(details.Helm.Parameters, []v1alpha1.HelmParameter{{Name: "replicas", Value: "2"}}) {
		t.Errorf("app details: %d %+v", code, details)
	}
	if code := f.call("GET", repoPath+"/refs/../../../x", "", admin, nil); code == 200 {
		t.Errorf("a path escaping the route answered 200")
	}

	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "web"},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Author, Message string
		Tags            []string
	}
	if code := f.call("GET", "/api/v1/applications/web/revisions/"+sha+"/metadata", "", admin, &meta); code != 200 ||
		meta.Message != "Add the web chart" || !reflect.DeepEqual(meta.Tags, []string{"v1"}) || meta.Author == "" {
		t.Errorf("revision metadata: %d %+v", code, meta)
	}
	var e map[string]any
	if code := f.call("GET", "/api/v1/applications/web/revisions/"+strings.Repeat("0", 40)+"/metadata", "", admin, &e); code != 404 {
		t.Errorf("metadata of a commit that does not exist: %d %v", code, e)
	}
	if code := f.call("GET", "/api/v1/applications/web/revisions/"+sha+"/chartdetails", "", admin, &e); code != 400 || e["message"] != "no chart found for application: web" {
		t.Errorf("chart details of a Git source: %d %v", code, e)
	}
	if code := f.call("GET", "/api/v1/applications/web/revisions/"+sha+"/metadata?sourceIndex=3", "", admin, &e); code != 400 {
		t.Errorf("metadata of a source the app lacks: %d %v", code, e)
	}
}
