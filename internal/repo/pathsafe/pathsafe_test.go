package pathsafe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "repo")
	outside = filepath.Join(base, "secret")
	for _, d := range []string{root + "/app/sub", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(root, "app/values.yaml"), []byte("a: 1"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "passwd"), []byte("x"), 0o644))
	must(t, os.Symlink("../values.yaml", filepath.Join(root, "app/sub/inside.yaml")))
	must(t, os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(root, "app/escape-abs")))
	must(t, os.Symlink("../../secret", filepath.Join(root, "app/escape-rel")))
	return root, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestJoin(t *testing.T) {
	root, _ := tree(t)
	for _, tc := range []struct {
		rel string
		ok  bool
	}{
		{"app/values.yaml", true},
		{"app/sub/inside.yaml", true},
		{"app/./sub/../values.yaml", true},
		{"app/missing.yaml", true},
		{".", true},
		{"../secret/passwd", false},
		{"app/../../secret/passwd", false},
		{"/etc/passwd", false},
		{"app/escape-abs", false},
		{"app/escape-rel/passwd", false},
		{"app/escape-rel/missing", false},
	} {
		_, err := Join(root, tc.rel)
		if tc.ok && err != nil {
			t.Errorf("Join(%q): unexpected error %v", tc.rel, err)
		}
		if !tc.ok && !errors.Is(err, ErrOutOfBounds) {
			t.Errorf("Join(%q) = %v, want ErrOutOfBounds", tc.rel, err)
		}
	}
}

func TestCheckTree(t *testing.T) {
	root, _ := tree(t)
	if err := CheckTree(root, filepath.Join(root, "app/sub")); err != nil {
		t.Errorf("tree with an inside link refused: %v", err)
	}
	if err := CheckTree(root, filepath.Join(root, "app")); !errors.Is(err, ErrOutOfBounds) {
		t.Errorf("tree with escaping links: got %v, want ErrOutOfBounds", err)
	}
	must(t, os.Symlink("nowhere", filepath.Join(root, "app/sub/dangling")))
	if err := CheckTree(root, filepath.Join(root, "app/sub")); !errors.Is(err, ErrOutOfBounds) {
		t.Errorf("dangling link: got %v, want ErrOutOfBounds", err)
	}
}
