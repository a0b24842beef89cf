package repo

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/testing/chartserver"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestOCISources: an oci:// source without a chart renders the files of
// its artifact's one layer as a Git checkout's (a plain directory, a
// Kustomization), at the digest a tag or a version constraint resolves
// to; the artifact's annotations are its metadata; a layer of a media type
// not allowed, or larger than the extraction bound, is refused by name.
func TestOCISources(t *testing.T) {
	reg := registryserver.Start(t)
	repoURL := "oci://" + reg.Host + "/org/manifests"
	creds := credsByURL{repoURL: git.Creds{Username: reg.Username, Password: reg.Password}}
	v1 := reg.PushArtifact(t, "org/manifests", registryserver.Artifact{
		Files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n",
			"base/kustomization.yaml": "resources: [svc.yaml]\nnamePrefix: k-\n",
			"base/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"},
		Annotations: map[string]string{"org.opencontainers.image.version": "1.0.0", "org.opencontainers.image.authors": "platform team",
			"org.opencontainers.image.source": "https://git.example.com/org/manifests"},
	}, "1.0.0")
	v11 := reg.PushArtifact(t, "org/manifests", registryserver.Artifact{
		Files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one-one}\n"}, MediaType: "application/vnd.oci.image.layer.v1.tar",
	}, "1.1.0")
	svc := NewService(Options{Root: t.TempDir(), OCIPlainHTTP: true, Credentials: creds})
	ctx := context.Background()
	render := func(rev, path string) (*Response, error) {
		return svc.Render(ctx, &Request{AppName: "oci", Sources: []v1alpha1.ApplicationSource{{RepoURL: repoURL, TargetRevision: rev, Path: path}}})
	}
	for _, tt := range []struct {
		rev, path, digest, want string
		typ                     v1alpha1.ApplicationSourceType
	}{
		{"1.0.0", ".", v1.String(), "ConfigMap/one", v1alpha1.SourceTypeDirectory},
		{"1.0.0", "base", v1.String(), "Service/k-web", v1alpha1.SourceTypeKustomize},
		{"1.*", ".", v11.String(), "ConfigMap/one-one", v1alpha1.SourceTypeDirectory},
		{v1.String(), ".", v1.String(), "ConfigMap/one", v1alpha1.SourceTypeDirectory},
	} {
		resp, err := render(tt.rev, tt.path)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.rev, tt.path, err)
		}
		got := names(resp.Objects)
		sort.Strings(got)
		if len(got) != 1 || got[0] != tt.want || resp.Sources[0].Revision != tt.digest || resp.Sources[0].Type != tt.typ {
			t.Errorf("%s %s: %v at %s (%s), want %s at %s (%s)", tt.rev, tt.path, got, resp.Sources[0].Revision, resp.Sources[0].Type, tt.want, tt.digest, tt.typ)
		}
	}
	if got, err := svc.Resolve(ctx, &ResolveRequest{RepoURL: repoURL, Revision: "~1.0"}); err != nil || got.Revision != v1.String() {
		t.Errorf("Resolve ~1.0: %+v, %v", got, err)
	}
	meta, err := svc.OCIMetadata(ctx, &OCIMetadataRequest{RepoURL: repoURL, Revision: "1.0.0"})
	if err != nil || meta.Version != "1.0.0" || meta.Authors != "platform team" || meta.SourceURL != "https://git.example.com/org/manifests" {
		t.Errorf("metadata %+v, %v", meta, err)
	}

	reg.PushArtifact(t, "org/manifests", registryserver.Artifact{
		Files: map[string]string{"cm.yaml": "x"}, MediaType: "application/vnd.example.layer.v1.tar"}, "odd")
	if _, err := render("odd", "."); err == nil || !strings.Contains(err.Error(), "not in the list of allowed media types") {
		t.Errorf("a layer of a media type Argo CD does not allow: %v", err)
	}
	strict := NewService(Options{Root: t.TempDir(), OCIPlainHTTP: true, Credentials: creds,
		OCI: ocisource.Options{LayerMediaTypes: []string{"application/vnd.oci.image.layer.v1.tar+gzip"}}})
	_, err = strict.Render(ctx, &Request{AppName: "oci", Sources: []v1alpha1.ApplicationSource{{RepoURL: repoURL, TargetRevision: "1.1.0", Path: "."}}})
	if err == nil || !strings.Contains(err.Error(), "not in the list of allowed media types") {
		t.Errorf("a tar layer when only tar+gzip is allowed: %v", err)
	}
	small := NewService(Options{Root: t.TempDir(), OCIPlainHTTP: true, Credentials: creds, OCI: ocisource.Options{MaxExtractedBytes: 50}})
	_, err = small.Render(ctx, &Request{AppName: "oci", Sources: []v1alpha1.ApplicationSource{{RepoURL: repoURL, TargetRevision: "1.0.0", Path: "."}}})
	if err == nil || !strings.Contains(err.Error(), "reposerver.oci.manifest.max.extracted.size") {
		t.Errorf("an artifact over the extraction bound: %v", err)
	}
	// reposerver.disable.oci.manifest.max.extracted.size: no bound at all.
	unbounded := NewService(Options{Root: t.TempDir(), OCIPlainHTTP: true, Credentials: creds, OCI: ocisource.Options{MaxExtractedBytes: -1}})
	if _, err := unbounded.Render(ctx, &Request{AppName: "oci", Sources: []v1alpha1.ApplicationSource{{RepoURL: repoURL, TargetRevision: "1.0.0", Path: "."}}}); err != nil {
		t.Errorf("the artifact without an extraction bound: %v", err)
	}
	if _, err := render("2.0.0", "."); err == nil {
		t.Error("a tag that does not exist rendered")
	}
}

// TestInsecureOCIForceHTTP: without the service-wide plain-HTTP option, a
// repository whose Secret says insecureOCIForceHttp (git.Creds.PlainHTTP)
// is reached over HTTP: OCI sources and Helm charts in OCI registries
// alike. (Registries on loopback addresses are reached over HTTP anyway,
// so that the option is what turns TLS off for other hosts is shown by
// ocisource's TestPlainHTTPScheme.)
func TestInsecureOCIForceHTTP(t *testing.T) {
	reg := registryserver.Start(t)
	sourceURL := "oci://" + reg.Host + "/org/manifests"
	reg.PushArtifact(t, "org/manifests", registryserver.Artifact{
		Files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n"}}, "1.0.0")
	charts := chartserver.NewOCIRegistry(t, chartserver.Chart{Name: "web", Version: "1.2.0", Files: map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart}\n"}})
	creds := credsByURL{
		sourceURL:  git.Creds{Username: reg.Username, Password: reg.Password, PlainHTTP: true},
		charts.URL: git.Creds{PlainHTTP: true},
	}
	svc := NewService(Options{Root: t.TempDir(), Credentials: creds})
	for name, src := range map[string]v1alpha1.ApplicationSource{
		"source": {RepoURL: sourceURL, TargetRevision: "1.0.0", Path: "."},
		"chart":  {RepoURL: charts.URL, Chart: "web", TargetRevision: "1.2.0"},
	} {
		resp, err := svc.Render(context.Background(), &Request{AppName: "plain", Sources: []v1alpha1.ApplicationSource{src}})
		if err != nil || len(resp.Objects) != 1 {
			t.Errorf("%s with insecureOCIForceHttp: %v", name, err)
		}
	}
}
