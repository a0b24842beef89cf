package writeback

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/testing/hostiletree"
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
	if !errors.Is(err, pathsafe.ErrLink) {
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

// TestOverrideFileDanglingLinkIsRefused is finding N4 of the second
// tenant review: a dangling link at .argocd-source-<app>.yaml made the
// updater create its target outside the checkout (under `capstan run`,
// in another Application's cached checkout). It is refused, and nothing
// is created.
func TestOverrideFileDanglingLinkIsRefused(t *testing.T) {
	g := hostiletree.New(t)
	g.Build("shop/\nshop/kustomization.yaml\nshop/.argocd-source-shop.yaml -> $OUT/dir/injected.yaml\n")
	err := GitEdit(app("shop", v1alpha1.SourceTypeKustomize, nil), config.WriteBack{Method: "git"}, []Change{{Name: "reg/shop", NewTag: "1.1.0"}})(g.Root)
	if !errors.Is(err, pathsafe.ErrLink) {
		t.Errorf("a dangling link out of the checkout: %v", err)
	}
	g.Check(t)
}

// FuzzGitEdit runs a write-back on hostile checkouts, with any target
// the annotations may name: nothing outside the checkout may change.
func FuzzGitEdit(f *testing.F) {
	for _, seed := range []struct{ spec, target, path string }{
		{"shop/\nshop/.argocd-source-shop.yaml -> $OUT/victim", "", "shop"},
		{"shop -> $OUT", "", "shop"},
		{"shop/\nshop/values.yaml -> $OUT/victim", "helmvalues:values.yaml", "shop"},
		{"shop/\nshop/kustomization.yaml -> $OUT/dir", "kustomization:.", "shop"},
		{"shop/\nshop/k -> ../../outside/victim", "kustomization:k", "shop"},
		{"shop/\nshop/d.yaml -> $OUT/victim", "", "shop"},
		{"x/\nx/y -> $OUT/dir", "/x/y/new.yaml", "shop"},
	} {
		f.Add(seed.spec, seed.target, seed.path)
	}
	f.Fuzz(func(t *testing.T, spec, target, path string) {
		g := hostiletree.New(t)
		g.Build(spec)
		for _, typ := range []v1alpha1.ApplicationSourceType{v1alpha1.SourceTypeKustomize, v1alpha1.SourceTypeHelm, v1alpha1.SourceTypeDirectory} {
			wb := config.WriteBack{Method: "git", TargetPath: target}
			if kind, p, ok := strings.Cut(target, ":"); ok && (kind == "helmvalues" || kind == "kustomization") {
				wb.Target, wb.TargetPath = config.WriteBackTarget(kind), p
			}
			_ = GitEdit(app(path, typ, nil), wb, []Change{{Name: "reg/shop", NewTag: "1.1.0"}})(g.Root)
		}
		g.Check(t)
	})
}
