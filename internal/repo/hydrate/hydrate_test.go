package hydrate

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/testing/hostiletree"
)

func sample() *Commit {
	return &Commit{
		RepoURL: "https://git.example.com/gitops", DrySHA: "0123456789abcdef0123456789abcdef01234567", Path: "envs/dev",
		Dry:     &DryCommit{Author: "Dev <dev@example.com>", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Message: "bump web\n\nto 1.2.3\n"},
		Objects: []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web"}}}},
	}
}

func TestFiles(t *testing.T) {
	files, err := sample().Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"envs/dev/manifest.yaml":     "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
		"hydrator.metadata":          `"subject": "bump web"`,
		"envs/dev/hydrator.metadata": `"drySha": "0123456789abcdef0123456789abcdef01234567"`,
		"envs/dev/README.md":         "git checkout 0123456789abcdef0123456789abcdef01234567\n```",
		".gitattributes":             "linguist-generated",
	} {
		if !strings.Contains(string(files[name]), want) {
			t.Errorf("%s:\n%s\nwant it to hold %q", name, files[name], want)
		}
	}
	if strings.Contains(string(files["envs/dev/hydrator.metadata"]), "subject") {
		t.Errorf("a path's hydrator.metadata holds the dry commit's message: %s", files["envs/dev/hydrator.metadata"])
	}
}

func TestReadmeTemplate(t *testing.T) {
	c := sample()
	c.ReadmeTemplate = "Rendered from {{ .RepoURL }} at {{ .DrySHA | trunc 7 }}.\n"
	files, err := c.Files()
	if err != nil || string(files["envs/dev/README.md"]) != "Rendered from https://git.example.com/gitops at 0123456.\n" {
		t.Errorf("README.md %q, %v", files["envs/dev/README.md"], err)
	}
	c.ReadmeTemplate = "{{ .Nope"
	if _, err := c.Files(); err == nil || !strings.Contains(err.Error(), "readmeMessageTemplate") {
		t.Errorf("a broken template: %v", err)
	}
}

func TestPathsRefused(t *testing.T) {
	// .git paths: a finding of the tenant review (the work tree's .git was emptied).
	for _, p := range []string{"", ".", "/", "./", "..", "../elsewhere", "/etc", ".git", ".git/hooks", "apps/.GIT", "./.git/"} {
		c := sample()
		c.Path = p
		if _, err := c.Files(); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct{ tmpl, want, err string }{
		{"", "0123456: bump web\n\nto 1.2.3\n\nCo-authored-by: Dev <dev@example.com>\n", ""},
		{"{{ .metadata.repoURL }}@{{ .metadata.drySha | trunc 12 }}", "https://git.example.com/gitops@0123456789ab", ""},
		{`{{ env "HOME" }}`, "", "function \"env\" not defined"},
		{`{{ range until 10000 }}xxxxxxxxxx{{ end }}`, "", "longer than"},
	} {
		got, err := sample().Message(tc.tmpl)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %q, %v; want %q, %q", tc.tmpl, got, err, tc.want, tc.err)
		}
	}
}

// TestEditKeepsTheRestOfTheBranch: the path is emptied of an earlier
// hydration's files; the branch's other files stay.
func TestEditKeepsTheRestOfTheBranch(t *testing.T) {
	root := t.TempDir()
	for name, data := range map[string]string{"envs/dev/stale.yaml": "old", "ci.yaml": "keep", "envs/prod/manifest.yaml": "keep"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := sample().Edit(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "envs/dev/stale.yaml")); err == nil {
		t.Error("a stale file of the path stayed")
	}
	for _, keep := range []string{"ci.yaml", "envs/prod/manifest.yaml", "envs/dev/manifest.yaml"} {
		if _, err := os.Stat(filepath.Join(root, keep)); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
}

func ExampleCommit_Message() {
	msg, err := sample().Message("")
	if err != nil {
		panic(err)
	}
	fmt.Print(msg)
	// Output:
	// 0123456: bump web
	//
	// to 1.2.3
	//
	// Co-authored-by: Dev <dev@example.com>
}

// TestReferences: valid Argocd-reference-commit-* trailers become the
// metadata's reference and leave the body; invalid ones stay in it.
func TestReferences(t *testing.T) {
	c := sample()
	c.Dry.Message = "bump image to 1.2.3\n\nBumped by CI.\n\n" +
		"Argocd-reference-commit-author: Ann Author <ann@example.com>\n" +
		"Argocd-reference-commit-sha: b82add298aa045d3672880802d5305c5a8aaa46e\n" +
		"Argocd-reference-commit-subject: make a change\n" +
		`Argocd-reference-commit-body: "make a change\n\nSigned-off-by: Ann"` + "\n" +
		"Argocd-reference-commit-repourl: https://git.example.com/code\n" +
		"Argocd-reference-commit-date: 2025-06-09T13:50:18-04:00\n" +
		"Argocd-reference-commit-sha: not-hex!\n"
	m := c.Metadata()
	want := &ReferenceCommit{Author: &Person{Name: "Ann Author", Email: "ann@example.com"}, SHA: "b82add298aa045d3672880802d5305c5a8aaa46e",
		Subject: "make a change", Body: "make a change\n\nSigned-off-by: Ann", RepoURL: "https://git.example.com/code", Date: "2025-06-09T13:50:18-04:00"}
	if len(m.References) != 1 || !reflect.DeepEqual(m.References[0].Commit, want) {
		t.Errorf("references %+v", m.References)
	}
	if m.Body != "Bumped by CI.\n\nArgocd-reference-commit-sha: not-hex!" {
		t.Errorf("body %q: want the invalid trailer kept, the valid ones gone", m.Body)
	}
	msg, err := c.Message("")
	if err != nil || !strings.Contains(msg, "Co-authored-by: Ann Author <ann@example.com>") {
		t.Errorf("message %q, %v", msg, err)
	}
}

// TestEditWritesThroughNoLink is finding N3 of the second tenant review:
// a link committed on the hydrated branch (hydrator.metadata -> a file
// anywhere) made the hydrator truncate and write that file. The edit is
// refused and nothing outside the work tree changes; links inside the
// hydrated path are removed with it, not followed.
func TestEditWritesThroughNoLink(t *testing.T) {
	for _, spec := range []string{
		"hydrator.metadata -> $OUT/victim",
		".gitattributes -> $OUT/victim",
		"envs -> $OUT/dir",
		"envs/\nenvs/dev -> $OUT/dir",
		"envs/\nenvs/dev/\nenvs/dev/README.md -> $OUT/victim",
	} {
		g := hostiletree.New(t)
		g.Build(spec)
		if err := sample().Edit(g.Root); err == nil && !strings.Contains(spec, "envs/dev/") {
			t.Errorf("%q: the edit went through", spec)
		}
		g.Check(t)
	}
}

// FuzzEdit hydrates into hostile branches, to any path: nothing outside
// the work tree may change.
func FuzzEdit(f *testing.F) {
	for _, seed := range []struct{ spec, path string }{
		{"hydrator.metadata -> $OUT/victim", "envs/dev"},
		{"envs -> $OUT", "envs/dev"},
		{"a/\na/b -> ../..", "a/b/outside"},
		{"envs/\nenvs/dev -> $OUT/dir", "envs/dev"},
	} {
		f.Add(seed.spec, seed.path)
	}
	f.Fuzz(func(t *testing.T, spec, path string) {
		g := hostiletree.New(t)
		g.Build(spec)
		c := sample()
		c.Path = path
		_ = c.Edit(g.Root)
		g.Check(t)
	})
}
