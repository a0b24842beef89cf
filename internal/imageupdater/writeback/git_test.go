package writeback

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

// checkout writes files into a directory standing for a repository's
// work tree.
func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func app(path string, typ v1alpha1.ApplicationSourceType, dir *v1alpha1.ApplicationSourceDirectory) *v1alpha1.Application {
	a := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{Path: path, Directory: dir}}}
	a.Name, a.Status.SourceType = "shop", typ
	return a
}

func TestOverrideFileStartsFromAnEmptyOne(t *testing.T) {
	root := checkout(t, map[string]string{"shop/.argocd-source-shop.yaml": "# emptied by hand\n"})
	c := Change{Name: "reg/shop", OldTag: "1.0.0", NewTag: "1.1.0"}
	if err := GitEdit(app("shop", v1alpha1.SourceTypeKustomize, nil), config.WriteBack{Method: "git"}, []Change{c})(root); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "shop/.argocd-source-shop.yaml"); got != "kustomize:\n  images:\n  - reg/shop:1.1.0\n" {
		t.Errorf("override file %q", got)
	}
}

func TestOverrideFileSymlinkOutsideIsRefused(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim.yaml")
	if err := os.WriteFile(outside, []byte("keep: me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := checkout(t, map[string]string{"shop/kustomization.yaml": "resources: []\n"})
	if err := os.Symlink(outside, filepath.Join(root, "shop", ".argocd-source-shop.yaml")); err != nil {
		t.Fatal(err)
	}
	err := GitEdit(app("shop", v1alpha1.SourceTypeKustomize, nil), config.WriteBack{Method: "git"}, []Change{{Name: "reg/shop", NewTag: "1.1.0"}})(root)
	if err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Errorf("a symlink out of the checkout: %v", err)
	}
	if got := read(t, outside, ""); got != "keep: me\n" {
		t.Errorf("the file outside was changed: %q", got)
	}
}

func TestTargetPathFromTheRepositoryRoot(t *testing.T) {
	root := checkout(t, map[string]string{"values/shop.yaml": "image:\n  tag: 1.0.0\n", "charts/shop/values.yaml": "image:\n  tag: 1.0.0\n"})
	wb := config.WriteBack{Method: "git", Target: "helmvalues", TargetPath: "/values/shop.yaml"}
	if err := GitEdit(app("charts/shop", v1alpha1.SourceTypeHelm, nil), wb, []Change{{Name: "reg/shop", NewTag: "1.1.0"}})(root); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "values/shop.yaml"); got != "image:\n  tag: 1.1.0\n  name: reg/shop\n" {
		t.Errorf("values/shop.yaml %q", got)
	}
	if got := read(t, root, "charts/shop/values.yaml"); got != "image:\n  tag: 1.0.0\n" {
		t.Errorf("the chart's own values changed: %q", got)
	}
	wb.TargetPath = "../../../etc/passwd"
	if err := GitEdit(app("charts/shop", v1alpha1.SourceTypeHelm, nil), wb, []Change{{Name: "reg/shop", NewTag: "1"}})(root); err == nil {
		t.Error("a target outside the checkout was accepted")
	}
}

func TestDirectoryManifestsFollowTheSourceSettings(t *testing.T) {
	root := checkout(t, map[string]string{
		"apps/web.yaml":       "kind: Deployment\nspec: {template: {spec: {containers: [{image: 'docker.io/library/nginx:1.25'}]}}}\n",
		"apps/other/app.yaml": "kind: Deployment\nspec: {template: {spec: {containers: [{image: nginx:1.25}]}}}\n",
	})
	c := Change{Name: "nginx", OldTag: "1.25", NewTag: "1.27"}
	if err := GitEdit(app("apps", v1alpha1.SourceTypeDirectory, nil), config.WriteBack{Method: "git"}, []Change{c})(root); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "apps/web.yaml"); !strings.Contains(got, "'docker.io/library/nginx:1.27'") {
		t.Errorf("web.yaml (nginx spelled in full): %q", got)
	}
	if got := read(t, root, "apps/other/app.yaml"); !strings.Contains(got, "nginx:1.25") {
		t.Errorf("a subdirectory was edited without directory.recurse: %q", got)
	}
	if err := GitEdit(app("apps", v1alpha1.SourceTypeDirectory, &v1alpha1.ApplicationSourceDirectory{Recurse: true}), config.WriteBack{Method: "git"}, []Change{c})(root); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "apps/other/app.yaml"); !strings.Contains(got, "nginx:1.27") {
		t.Errorf("directory.recurse: %q", got)
	}
}

func TestBranchTemplates(t *testing.T) {
	changes := []Change{{Name: "reg/shop", Image: config.Image{Alias: "shop"}, OldTag: "1.0.0", NewTag: "1.1.0"}}
	got, err := Branch("image-updater{{range .Images}}-{{.Alias}}-{{.NewTag}}{{end}}", "shop", changes)
	if err != nil || got != "image-updater-shop-1.1.0" {
		t.Errorf("branch %q %v", got, err)
	}
	if _, err := Branch("{{range .Nothing}}x{{end}}", "shop", changes); err == nil {
		t.Error("an empty branch name was accepted (it would push to the base branch)")
	}
	if got, _ := Branch(strings.Repeat("b", 300), "shop", changes); len(got) != 255 {
		t.Errorf("a %d-character branch name", len(got))
	}
}
