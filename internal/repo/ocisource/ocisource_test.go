package ocisource

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/registryserver"
)

// TestPlainHTTPScheme: a registry is reached over HTTPS unless the
// Client's options or the repository's credentials (a Secret's
// insecureOCIForceHttp) ask for plain HTTP.
func TestPlainHTTPScheme(t *testing.T) {
	for _, tc := range []struct {
		clientPlain, credsPlain bool
		want                    string
	}{
		{false, false, "https"},
		{false, true, "http"},
		{true, false, "http"},
	} {
		c := New(Options{Root: t.TempDir(), PlainHTTP: tc.clientPlain})
		repo, err := c.repository("oci://registry.example.com/org/manifests", git.Creds{PlainHTTP: tc.credsPlain})
		if err != nil {
			t.Fatal(err)
		}
		if got := repo.Registry.Scheme(); got != tc.want {
			t.Errorf("client %t, creds %t: %s, want %s", tc.clientPlain, tc.credsPlain, got, tc.want)
		}
	}
}

// TestObserveRequests: every request to a real registry reaches
// Options.Observe with its kind, as Argo CD's argocd_oci_* metrics count
// them; a tag list served from the cache is not a request.
func TestObserveRequests(t *testing.T) {
	reg := registryserver.Start(t)
	repoURL := "oci://" + reg.Host + "/org/manifests"
	digest := reg.PushArtifact(t, "org/manifests", registryserver.Artifact{Files: map[string]string{"cm.yaml": "kind: ConfigMap\n"}}, "1.0.0")
	var seen []string
	c := New(Options{Root: t.TempDir(), PlainHTTP: true, Observe: func(r Request) {
		if r.URL != repoURL {
			t.Errorf("request URL %q", r.URL)
		}
		seen = append(seen, fmt.Sprintf("%s %s %t", r.Kind, r.Revision, r.Err != nil))
	}})
	ctx := context.Background()
	creds := git.Creds{Username: reg.Username, Password: reg.Password}
	if _, err := c.Resolve(ctx, repoURL, "1.0.0", creds, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(ctx, repoURL, "1.*", creds, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(ctx, repoURL, "2.*", creds, false); err == nil { // the tag list from the cache
		t.Fatal("no tag matches 2.*")
	}
	if _, err := c.Fetch(ctx, repoURL, digest.String(), creds); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(ctx, repoURL, digest.String(), creds); err != nil { // unpacked already
		t.Fatal(err)
	}
	if _, err := c.Metadata(ctx, repoURL, digest.String(), creds); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tags(ctx, repoURL, creds); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"resolve-revision 1.0.0 false",
		"get-tags  false", "resolve-revision 1.* false",
		"resolve-revision 2.* true",
		"extract " + digest.String() + " false",
		"resolve-revision " + digest.String() + " false", "digest-metadata " + digest.String() + " false",
		"get-tags  false", "test-repo  false",
	}
	if !slices.Equal(seen, want) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}
