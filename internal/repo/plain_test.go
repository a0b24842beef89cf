package repo

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestPlainDirectoriesRenderWithoutACheckout: a directory of plain
// manifests renders from the commit's objects, anything else from a
// checkout, and both give what a render of the checkout gives.
func TestPlainDirectoriesRenderWithoutACheckout(t *testing.T) {
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"plain/a.yaml":                   cm("a"),
		"plain/sub/b.json":               `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
		"plain/values.yaml":              "replicas: 2\n",
		"override/a.yaml":                cm("a"),
		"override/deep/b.yaml":           cm("b"),
		"override/.argocd-source-x.yaml": "directory: {recurse: true}\n",
		"kustomized/kustomization.yaml":  "resources: [a.yaml]\n",
		"kustomized/a.yaml":              cm("k"),
		"jsonnet/a.jsonnet":              `{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "j"}}`,
		"linked/real.yaml":               cm("real"),
	})
	sha := remote.Symlink(t, "linked/link.yaml", "real.yaml")

	for _, tc := range []struct {
		name      string
		source    v1alpha1.ApplicationSource
		want      []string
		checksOut bool
	}{
		{"plain", v1alpha1.ApplicationSource{Path: "plain"}, []string{"ConfigMap/a"}, false},
		{"plain, recursing", v1alpha1.ApplicationSource{Path: "./plain/", Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}}, []string{"ConfigMap/a", "ConfigMap/b"}, false},
		{"plain, an include glob", v1alpha1.ApplicationSource{Path: "plain", Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "sub/*"}}, []string{"ConfigMap/b"}, false},
		{"an override file", v1alpha1.ApplicationSource{Path: "override"}, []string{"ConfigMap/a", "ConfigMap/b"}, false},
		{"a kustomization", v1alpha1.ApplicationSource{Path: "kustomized"}, []string{"ConfigMap/k"}, true},
		{"jsonnet", v1alpha1.ApplicationSource{Path: "jsonnet"}, []string{"ConfigMap/j"}, true},
		{"a symbolic link", v1alpha1.ApplicationSource{Path: "linked"}, []string{"ConfigMap/real", "ConfigMap/real"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			svc := NewService(Options{Root: root})
			tc.source.RepoURL = remote.URL
			resp, err := svc.Render(context.Background(), &Request{AppName: "x", Sources: []v1alpha1.ApplicationSource{tc.source}})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(resp.Objects); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("objects %v, want %v", got, tc.want)
			}
			if got := checkedOut(t, root); got != tc.checksOut {
				t.Errorf("checked out: %v, want %v", got, tc.checksOut)
			}
			dir, err := svc.git.Repo(remote.URL, git.Creds{}).Checkout(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			fromDisk, _, err := renderSource(context.Background(), &sourceInput{root: dir, source: tc.source, revision: sha, req: &Request{AppName: "x"}})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.Objects, fromDisk) {
				t.Errorf("rendered %v, the checkout renders %v", names(resp.Objects), names(fromDisk))
			}
		})
	}

	svc := NewService(Options{Root: t.TempDir()})
	_, err := svc.Render(context.Background(), &Request{AppName: "x", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "missing"}}})
	if err == nil || !strings.Contains(err.Error(), `path "missing" does not exist`) {
		t.Errorf("a missing path: %v", err)
	}
}

// checkedOut reports whether a Service rooted at root checked out a commit.
func checkedOut(t *testing.T, root string) bool {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(root, "git", "*", "checkouts", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(found) > 0
}
