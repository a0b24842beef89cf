package server

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// registryCreds gives one registry's credentials to every repository.
type registryCreds git.Creds

func (c registryCreds) ForRepo(context.Context, string, string) (git.Creds, error) {
	return git.Creds(c), nil
}

// TestOCIMetadata: GET …/revisions/{revision}/ocimetadata answers what an
// OCI source's artifact says of itself, as Argo CD's GetOCIMetadata; a
// source that is not an OCI source is a 400.
func TestOCIMetadata(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	reg := registryserver.Start(t)
	reg.PushArtifact(t, "org/manifests", registryserver.Artifact{
		Files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n"},
		Annotations: map[string]string{"org.opencontainers.image.version": "1.2.0", "org.opencontainers.image.description": "shop manifests",
			"org.opencontainers.image.created": "2026-11-01T10:00:00Z"},
	}, "1.2.0")
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second, OCIPlainHTTP: true,
		Credentials: registryCreds{Username: reg.Username, Password: reg.Password}})
	f := startWith(t, Options{Insecure: true, Renderer: renderer})
	ctx := context.Background()
	for name, src := range map[string]v1alpha1.ApplicationSource{
		"oci": {RepoURL: "oci://" + reg.Host + "/org/manifests", TargetRevision: "1.2.0", Path: "."},
		"git": {RepoURL: "https://git.example.com/shop.git", Path: "."},
	} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source: &src, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	admin := f.adminToken()
	app := `{"metadata":{"name":"oci-api"},"spec":{"project":"default","source":{"repoURL":"oci://` + reg.Host +
		`/org/manifests","targetRevision":"1.*","path":"."},"destination":{"server":"https://kubernetes.default.svc","namespace":"shop"}}}`
	if code := f.call("POST", "/api/v1/applications", app, admin, nil); code != 200 {
		t.Errorf("creating an app of an OCI source: %d", code)
	}
	bad := strings.Replace(app, `"oci-api"`, `"oci-bad"`, 1)
	bad = strings.Replace(bad, "/org/manifests", "/Org/../x", 1)
	if code := f.call("POST", "/api/v1/applications", bad, admin, nil); code != 400 {
		t.Errorf("an OCI source naming no repository: %d, want 400", code)
	}
	var meta ocisource.Metadata
	if code := f.call("GET", "/api/v1/applications/oci/revisions/1.2.0/ocimetadata", "", admin, &meta); code != 200 ||
		meta.Version != "1.2.0" || meta.Description != "shop manifests" || meta.CreatedAt != "2026-11-01T10:00:00Z" {
		t.Errorf("metadata: %d %+v", code, meta)
	}
	if code := f.call("GET", "/api/v1/applications/git/revisions/HEAD/ocimetadata", "", admin, nil); code != 400 {
		t.Errorf("a Git source: %d, want 400", code)
	}

	// An OCI repository is added as Argo CD's CLI adds one (repo add
	// oci://… --type oci): its connection is tested by listing its tags.
	repoBody := func(password string) string {
		return `{"repo":"oci://` + reg.Host + `/org/manifests","type":"oci","username":"` + reg.Username + `","password":"` + password + `"}`
	}
	if code := f.call("POST", "/api/v1/repositories", repoBody("wrong"), admin, nil); code != 400 {
		t.Errorf("an OCI repository with a wrong password: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/repositories", repoBody(reg.Password), admin, nil); code != 200 {
		t.Errorf("adding an OCI repository: %d", code)
	}
}
