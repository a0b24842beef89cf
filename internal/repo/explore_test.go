package repo

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/chartserver"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestExplore asks a real Git server (basic auth) and real chart
// repositories what a user picking a source sees: branches and tags, the
// apps of a revision, a Helm and a Kustomize source's details, a commit's
// metadata, a chart repository's charts and a chart's details.
func TestExplore(t *testing.T) {
	ctx := context.Background()
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "apps")
	remote.Commit(t, "first", map[string]string{"plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	remote.Tag(t, "v1.0.0")
	sha := remote.Commit(t, "Add the web chart\n\nWith its production values.", map[string]string{
		"charts/web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/values.yaml":           "replicas: 1\nimage:\n  tag: \"1.27\"\nports: [80, 443]\n",
		"charts/web/values-prod.yaml":      "replicas: 3\n",
		"charts/web/templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"overlays/prod/kustomization.yaml": "resources: [deploy.yaml]\nimages: [{name: nginx, newTag: \"1.27\"}]\n",
		"overlays/prod/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n" +
			"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n",
	})
	remote.Branch(t, "release-1")
	chart := chartserver.Chart{Name: "cache", Version: "2.1.0", Files: map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: cache\nversion: 2.1.0\ndescription: A cache\nhome: https://cache.example.com\n" +
			"maintainers: [{name: Ops, email: ops@example.com}, {name: Dev}]\n",
	}}
	httpRepo := chartserver.NewHTTPRepo(t, chart, chartserver.Chart{Name: "cache", Version: "2.0.0"})
	oci := chartserver.NewOCIRegistry(t, chart)
	svc := NewService(Options{Root: t.TempDir(), OCIPlainHTTP: true, Credentials: credsByURL{
		remote.URL:   git.Creds{Username: srv.Username, Password: srv.Password},
		httpRepo.URL: git.Creds{Username: httpRepo.Username, Password: httpRepo.Password},
	}})

	refs, err := svc.Refs(ctx, &RefsRequest{RepoURL: remote.URL})
	if err != nil || !slices.Contains(refs.Branches, "release-1") || !reflect.DeepEqual(refs.Tags, []string{"v1.0.0"}) {
		t.Errorf("refs = %+v, %v", refs, err)
	}
	apps, err := svc.Apps(ctx, &AppsRequest{RepoURL: remote.URL, Revision: "release-1"})
	want := []AppPath{{Type: v1alpha1.SourceTypeHelm, Path: "charts/web"}, {Type: v1alpha1.SourceTypeKustomize, Path: "overlays/prod"}}
	if err != nil || !reflect.DeepEqual(apps.Items, want) {
		t.Errorf("apps = %+v, %v; want %+v", apps, err, want)
	}

	helm, err := svc.AppDetails(ctx, &AppDetailsRequest{Source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "charts/web",
		Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}, Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "1.28"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, p := range helm.Helm.Parameters {
		params[p.Name] = p.Value
	}
	if helm.Type != v1alpha1.SourceTypeHelm || !reflect.DeepEqual(helm.Helm.ValueFiles, []string{"values-prod.yaml", "values.yaml"}) ||
		!strings.HasPrefix(helm.Helm.Values, "replicas: 1") ||
		!reflect.DeepEqual(params, map[string]string{"replicas": "3", "image.tag": "1.28", "ports[0]": "80", "ports[1]": "443"}) {
		t.Errorf("helm details = %+v %+v", helm, helm.Helm)
	}
	kust, err := svc.AppDetails(ctx, &AppDetailsRequest{Source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "overlays/prod"}})
	if err != nil || kust.Type != v1alpha1.SourceTypeKustomize || !reflect.DeepEqual(kust.Kustomize.Images, []string{"nginx:1.27"}) {
		t.Errorf("kustomize details = %+v, %v", kust, err)
	}
	if _, err := svc.AppDetails(ctx, &AppDetailsRequest{Source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "../../etc"}}); err == nil {
		t.Error("a path out of the repository was explored")
	}

	meta, err := svc.RevisionMetadata(ctx, &RevisionMetadataRequest{RepoURL: remote.URL, Revision: sha})
	if err != nil || meta.Message != "Add the web chart\n\nWith its production values." || !strings.Contains(meta.Author, "<") || meta.Date == nil {
		t.Errorf("metadata = %+v, %v", meta, err)
	}
	tagged, err := svc.RevisionMetadata(ctx, &RevisionMetadataRequest{RepoURL: remote.URL, Revision: "v1.0.0"})
	if err != nil || !reflect.DeepEqual(tagged.Tags, []string{"v1.0.0"}) {
		t.Errorf("tagged commit = %+v, %v", tagged, err)
	}

	charts, err := svc.Charts(ctx, &ChartsRequest{RepoURL: httpRepo.URL})
	if err != nil || len(charts.Items) != 1 || !reflect.DeepEqual(charts.Items[0].Versions, []string{"2.1.0", "2.0.0"}) {
		t.Errorf("charts = %+v, %v", charts, err)
	}
	for _, repoURL := range []string{httpRepo.URL, oci.URL} {
		d, err := svc.ChartDetails(ctx, &ChartDetailsRequest{RepoURL: repoURL, Chart: "cache", Revision: "2.*"})
		if err != nil || d.Description != "A cache" || d.Home != "https://cache.example.com" ||
			!reflect.DeepEqual(d.Maintainers, []string{"Ops <ops@example.com>", "Dev"}) {
			t.Errorf("%s: chart details = %+v, %v", repoURL, d, err)
		}
	}
	ociTags, err := svc.Refs(ctx, &RefsRequest{RepoURL: oci.URL + "/cache", OCI: true})
	if err != nil || !slices.Contains(ociTags.Tags, "2.1.0") {
		t.Errorf("OCI tags = %+v, %v", ociTags, err)
	}
}
