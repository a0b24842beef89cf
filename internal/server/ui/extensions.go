package ui

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
)

// DefaultExtensionsDir is where Argo CD's API server reads UI extensions
// from; an init container or a sidecar puts them there.
const DefaultExtensionsDir = "/tmp/extensions"

// MaxExtensionsBytes bounds extensions.js: files past it are left out,
// each named in a comment.
const MaxExtensionsBytes = 32 << 20

// extensionFile names the files that are UI extensions, as Argo CD names
// them: extension.js, extension-rollouts.js, …
var extensionFile = regexp.MustCompile(`^extension(.*)\.js$`)

// serveExtensions answers extensions.js: every extension file under dir
// (symbolic links left out, in the order of their paths), read afresh on
// each request, so an extension installed after the start is loaded by the
// next page. The page runs it after its own modules, which define
// window.extensionsAPI for it. No directory means no extensions.
func serveExtensions(dir string, w http.ResponseWriter) {
	var b bytes.Buffer
	if dir != "" {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() || !extensionFile.MatchString(d.Name()) {
				return nil // an unreadable directory is skipped, the others still served
			}
			rel, _ := filepath.Rel(dir, p)
			appendExtension(&b, p, filepath.ToSlash(rel))
			return nil
		})
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b.Bytes())
}

// appendExtension adds the file at p, named name, to b unless that would
// take b past MaxExtensionsBytes.
func appendExtension(b *bytes.Buffer, p, name string) {
	data, err := readAtMost(p, MaxExtensionsBytes-b.Len())
	switch {
	case err != nil:
		fmt.Fprintf(b, "// extension %q left out: %v\n", name, err)
	case b.Len()+len(data)+len(name)+32 > MaxExtensionsBytes:
		fmt.Fprintf(b, "// extension %q left out: extensions.js would pass %d bytes\n", name, MaxExtensionsBytes)
	default:
		fmt.Fprintf(b, "// extension %s\n", name)
		b.Write(data)
		b.WriteString("\n;\n")
	}
}

// readAtMost reads the file at p, or its first limit+1 bytes when it is
// longer.
func readAtMost(p string, limit int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("it cannot be read")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max(limit, 0))+1))
	if err != nil {
		return nil, fmt.Errorf("it cannot be read")
	}
	return data, nil
}
