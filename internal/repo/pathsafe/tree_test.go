package pathsafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/hostiletree"
)

// TestTreeWritesThroughNoLink: a write, a removal or a read whose path
// passes through a link (out of the tree, dangling, or inside it) is
// refused, and nothing outside the tree changes.
func TestTreeWritesThroughNoLink(t *testing.T) {
	g := hostiletree.New(t)
	g.Build("app/\napp/out -> $OUT\napp/dangling -> $OUT/new\napp/inner -> ../app\napp/victim -> $OUT/victim\nfile\n")
	tree, err := OpenTree(g.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	for _, name := range []string{"app/out/victim", "app/dangling", "app/inner/x", "app/victim", "../outside/victim", "/etc/x", "app/../../x"} {
		if err := tree.WriteFile(name, []byte("written"), 0o644); err == nil {
			t.Errorf("WriteFile(%q) went through", name)
		}
		if err := tree.RemoveAll(name); err == nil && name != "app/dangling" {
			t.Errorf("RemoveAll(%q) went through", name)
		}
	}
	if _, err := tree.ReadFile("app/victim", 1<<10); !errors.Is(err, ErrLink) {
		t.Errorf("ReadFile through a link: %v", err)
	}
	if err := tree.WriteFile("app/sub/new.yaml", []byte("ok"), 0o644); err != nil {
		t.Errorf("a plain write: %v", err)
	}
	if err := tree.Unlink("app/victim"); err != nil {
		t.Fatal(err)
	}
	if err := tree.WriteFile("app/victim", []byte("replaced"), 0o644); err != nil {
		t.Errorf("a write where a link was: %v", err)
	}
	g.Check(t)
}

// FuzzTreeWrite builds a hostile tree, then writes and removes a path in
// it: nothing outside the tree may change, and a write that went through
// left a regular file inside.
func FuzzTreeWrite(f *testing.F) {
	for _, seed := range []struct{ spec, name string }{
		{"app/\napp/x -> $OUT/victim", "app/x"},
		{"app -> $OUT", "app/victim"},
		{"a/\na/b -> ../..", "a/b/outside/victim"},
		{"x -> $OUT/dir\n", "x/new"},
		{"d -> $OUT/missing", "d"},
		{"a/\na/\na/f\na/f -> $OUT/victim", "a/f"},
		{"l1 -> l2\nl2 -> $OUT/victim", "l1"},
	} {
		f.Add(seed.spec, seed.name)
	}
	f.Fuzz(func(t *testing.T, spec, name string) {
		g := hostiletree.New(t)
		g.Build(spec)
		tree, err := OpenTree(g.Root)
		if err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
		if tree.WriteFile(name, []byte("written"), 0o644) == nil {
			info, err := os.Lstat(filepath.Join(g.Root, filepath.Clean(name)))
			if err != nil || info.Mode()&fs.ModeType != 0 {
				t.Errorf("WriteFile(%q) succeeded but left %v %v", name, info, err)
			}
		}
		_ = tree.RemoveAll(name)
		g.Check(t)
	})
}
