package repo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// FuzzOverrideFiles merges .argocd-source files, which the repository
// holds (and the image updater writes): never a panic, and never a change
// of where the source is.
func FuzzOverrideFiles(f *testing.F) {
	f.Add("helm:\n  parameters:\n  - name: image.tag\n    value: 1.2.3\n    forcestring: true\n")
	f.Add("kustomize:\n  images: [nginx:1.27]\nrepoURL: https://evil.example.com\npath: ../../etc\n")
	f.Add("null")
	f.Add("[1, 2]")
	f.Add("helm: {valuesObject: {a: &a [*a]}}")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ".argocd-source-app.yaml"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		src := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/r.git", Path: "app", TargetRevision: "main"}
		if err := mergeOverrideFiles(&src, os.DirFS(dir), "app"); err != nil {
			return
		}
		if src.RepoURL != "https://git.example.com/r.git" || src.Path != "app" || src.TargetRevision != "main" || src.Chart != "" {
			t.Fatalf("an override file moved the source: %+v", src)
		}
	})
}
