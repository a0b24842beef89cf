package archive

import (
	"archive/tar"
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/hostiletree"
)

// FuzzUntar extracts hostile archives (links out of the tree, dangling
// links, links to links, `..`, absolute names, the same name twice, a file
// written through an earlier link) into a work tree, with and without
// links kept: nothing outside the tree may change. Each line of spec is
// an entry: "name" a file, "name/" a directory, "name -> target" a
// symbolic link, "name => target" a hard link ($OUT names the guarded
// directory beside the tree).
func FuzzUntar(f *testing.F) {
	for _, seed := range []string{
		"a -> $OUT\na/victim",
		"a -> ../outside\na/victim",
		"link -> $OUT/victim\nlink",
		"d/\nd/l -> ../../outside/dir\nd/l/new",
		"h => $OUT/victim\nh",
		"x\nx -> $OUT/victim\nx",
		"/abs\n../up\na/../../up",
		"l1 -> l2\nl2 -> $OUT/victim\nl1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		for _, links := range []bool{false, true} {
			g := hostiletree.New(t)
			dir := filepath.Join(g.Root, "x")
			_ = Untar(hostileTar(spec, g.Outside), dir, Options{MaxBytes: 1 << 20, Symlinks: links})
			g.Check(t)
		}
	})
}

// FuzzCopy copies hostile trees as the Kustomize build and submodules do:
// nothing outside the destination may change.
func FuzzCopy(f *testing.F) {
	for _, seed := range []string{"a -> $OUT\na/", "l -> $OUT/victim", "d/\nd/l -> ../../outside/dir", "l1 -> l2\nl2 -> $OUT/dir"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		g := hostiletree.New(t)
		g.Build(spec)
		_ = Copy(g.Root, filepath.Join(filepath.Dir(g.Root), "copy"), 1<<20)
		g.Check(t)
	})
}

// hostileTar is the archive spec describes; an entry the tar writer
// refuses is left out.
func hostileTar(spec, outside string) *bytes.Reader {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, line := range strings.Split(spec, "\n") {
		if i >= 64 || line == "" {
			continue
		}
		line = strings.ReplaceAll(line, "$OUT", outside)
		h := &tar.Header{Name: line, Typeflag: tar.TypeReg, Mode: 0o644}
		body := "written"
		if name, target, ok := strings.Cut(line, " -> "); ok {
			h.Name, h.Linkname, h.Typeflag, body = name, target, tar.TypeSymlink, ""
		} else if name, target, ok := strings.Cut(line, " => "); ok {
			h.Name, h.Linkname, h.Typeflag, body = name, target, tar.TypeLink, ""
		} else if strings.HasSuffix(line, "/") {
			h.Typeflag, h.Mode, body = tar.TypeDir, 0o755, ""
		}
		h.Size = int64(len(body))
		if tw.WriteHeader(h) == nil {
			_, _ = tw.Write([]byte(body))
		}
	}
	_ = tw.Close()
	return bytes.NewReader(buf.Bytes())
}
