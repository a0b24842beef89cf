package pathsafe

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzJoin checks that no relative path (a source path, a Helm value file
// path, a Jsonnet library) joined to a root ever lands outside it.
func FuzzJoin(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app", "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "app", "escape")); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"app", "app/sub", "../x", "app/../../x", "/etc/passwd", "app/escape/x", "app/./sub/..", "", "..", "a\x00b"} {
		f.Add(seed)
	}
	real, err := Root(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		joined, err := Join(root, rel)
		if err != nil {
			return
		}
		if !Within(real, joined) {
			t.Fatalf("Join(%q) = %s, outside %s", rel, joined, real)
		}
	})
}
