// Package hostiletree builds the work trees a hostile repository could
// hand a writer (links out of the tree, dangling links, links to links,
// `..` in names, the same name twice), with a guarded directory beside
// them: a fuzz target builds a tree from its input, runs a writer on it,
// and checks that nothing outside the tree was written, created or
// truncated.
//
//	g := hostiletree.New(t)
//	g.Build(spec) // "app/\napp/.argocd-source-x.yaml -> $OUT/victim\n"
//	_ = writer(g.Root)
//	g.Check(t)
package hostiletree

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Guard is a work tree and the directory beside it that no writer may
// touch.
type Guard struct {
	// Root is the work tree; Outside the guarded directory, which holds a
	// file "victim" and a directory "dir".
	Root, Outside string
	before        map[string]string
}

// New makes an empty work tree and a guarded directory.
func New(t testing.TB) *Guard {
	t.Helper()
	base := t.TempDir()
	g := &Guard{Root: filepath.Join(base, "tree"), Outside: filepath.Join(base, "outside")}
	for _, dir := range []string{g.Root, filepath.Join(g.Outside, "dir")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(g.Outside, "victim"), []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.before = g.snapshot(t)
	return g
}

// maxEntries bounds what one spec builds.
const maxEntries = 64

// Build makes the entries spec lists, one a line: "path" a file, "path/"
// a directory, "path -> target" a symbolic link to target as written
// ($OUT stands for the guarded directory, so links may point at it). Names
// may hold `..`, repeat, or pass through links; an entry that cannot be
// made where it says (outside the tree, say) is left out.
func (g *Guard) Build(spec string) {
	for i, line := range strings.Split(spec, "\n") {
		if i >= maxEntries {
			return
		}
		name, target, isLink := strings.Cut(line, " -> ")
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsRune(name, 0) || strings.ContainsRune(target, 0) {
			continue
		}
		full := filepath.Join(g.Root, name)
		if !inside(g.Root, full) || !noLinkOnTheWay(g.Root, filepath.Dir(full)) {
			continue // made by os calls here, which would follow it
		}
		_ = os.MkdirAll(filepath.Dir(full), 0o755)
		switch {
		case isLink:
			_ = os.Symlink(strings.ReplaceAll(strings.TrimSpace(target), "$OUT", g.Outside), full)
		case strings.HasSuffix(name, "/"):
			_ = os.MkdirAll(full, 0o755)
		default:
			_ = os.WriteFile(full, []byte("kind: Kustomization\nimages: []\n"), 0o644)
		}
	}
}

// inside reports whether path is root or beneath it, lexically.
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// noLinkOnTheWay reports whether no existing component of dir beneath
// root is a symbolic link.
func noLinkOnTheWay(root, dir string) bool {
	for d := dir; inside(root, d) && d != root; d = filepath.Dir(d) {
		if info, err := os.Lstat(d); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return false
		}
	}
	return true
}

// Check fails the test when anything in the guarded directory changed,
// appeared or went away.
func (g *Guard) Check(t testing.TB) {
	t.Helper()
	after := g.snapshot(t)
	for name, was := range g.before {
		if now, ok := after[name]; !ok || now != was {
			t.Fatalf("a writer changed %s outside the work tree: %q → %q", name, was, now)
		}
	}
	for name := range after {
		if _, ok := g.before[name]; !ok {
			t.Fatalf("a writer created %s outside the work tree", name)
		}
	}
}

// snapshot is every entry of the guarded directory and what it holds.
func (g *Guard) snapshot(t testing.TB) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(g.Outside, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(g.Outside, path)
		switch {
		case d.IsDir():
			out[rel] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			link, _ := os.Readlink(path)
			out[rel] = "link " + link
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
