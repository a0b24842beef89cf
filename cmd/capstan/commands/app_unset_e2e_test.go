package commands

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestAppUnset: app unset removes overrides from a single source, and from
// the source of a multi-source Application picked by --source-position or
// --source-name; with several sources and neither, it asks for one.
func TestAppUnset(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	ctx := context.Background()
	helm := func(name string) v1alpha1.ApplicationSource {
		return v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/" + name + ".git", Path: name, Name: name, Ref: name + "-ref",
			Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "1"}, {Name: "replicas", Value: "2"}}}}
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "multi", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Sources:     []v1alpha1.ApplicationSource{helm("web"), helm("api")},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "multi"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := f.run("app", "unset", "multi", "-p", "image.tag"); code == 0 || !strings.Contains(errOut, "--source-name") {
		t.Errorf("unset without a source: %d %s", code, errOut)
	}
	f.expect(0, "app", "unset", "multi", "--source-name", "api", "-p", "image.tag", "--ref")
	f.expect(0, "app", "unset", "multi", "--source-position", "1", "-p", "replicas")
	if code, _, errOut := f.run("app", "unset", "multi", "--source-name", "db", "-p", "x"); code == 0 || !strings.Contains(errOut, "no source named db") {
		t.Errorf("an unknown source name: %d %s", code, errOut)
	}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	web, api := app.Spec.Sources[0], app.Spec.Sources[1]
	if len(web.Helm.Parameters) != 1 || web.Helm.Parameters[0].Name != "image.tag" || web.Ref != "web-ref" {
		t.Errorf("the first source: %+v", web)
	}
	if len(api.Helm.Parameters) != 1 || api.Helm.Parameters[0].Name != "replicas" || api.Ref != "" {
		t.Errorf("the source named api: %+v", api)
	}
}
