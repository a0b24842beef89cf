package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/capstan-cd/capstan/internal/repo/archive"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// request is what is sent to a plugin for one source: the checkout as a
// tar.gz in a temporary file, with its checksum and the source's metadata.
type request struct {
	archive  *os.File
	size     int64
	checksum string // hex SHA-256 of the archive
	appName  string // the source directory's base name, as Argo CD sends it
	appPath  string // the source directory, relative to the archive's root
	env      []string
}

// prepare packs src's checkout for sending: all of it, or with narrow
// only the directory holding the source and its manifest-generate-paths.
func (c *Client) prepare(src *Source, narrow bool) (*request, error) {
	if _, err := pathsafe.Join(src.Root, src.Path); err != nil {
		return nil, err
	}
	env, err := environ(src)
	if err != nil {
		return nil, err
	}
	root, appPath := ".", filepath.Clean(src.Path)
	if narrow {
		root = generateRoot(appPath, src.GeneratePaths)
		if appPath, err = filepath.Rel(root, appPath); err != nil {
			return nil, err
		}
	}
	f, err := os.CreateTemp("", "capstan-plugin-*.tgz")
	if err != nil {
		return nil, err
	}
	req := &request{archive: f, env: env, appPath: appPath}
	req.appName = filepath.Base(filepath.Join(src.Root, src.Path))
	if err := req.pack(filepath.Join(src.Root, root), c.opts); err != nil {
		req.close()
		return nil, err
	}
	return req, nil
}

func (r *request) pack(root string, opts Options) error {
	hash := sha256.New()
	files, err := archive.Tgz(io.MultiWriter(r.archive, hash), root, archive.PackOptions{MaxBytes: opts.MaxArchiveBytes, Exclude: opts.Exclude})
	if err != nil {
		return fmt.Errorf("packing the source for its plugin: %w", err)
	}
	if files == 0 {
		return fmt.Errorf("packing the source for its plugin: no files to send (reposerver.plugin.tar.exclusions leaves none?)")
	}
	r.checksum = hex.EncodeToString(hash.Sum(nil))
	r.size, err = r.archive.Seek(0, io.SeekCurrent)
	return err
}

// generateRoot is the deepest directory, relative to the checkout's root,
// holding the source's directory appPath and each path of the
// manifest-generate-paths annotation paths (";"-separated; relative to
// appPath, or to the root when they start with "/"), as Argo CD narrows
// what it sends. A path climbing out of the checkout counts as its root;
// without paths it is the root (".").
func generateRoot(appPath, paths string) string {
	common := splitPath(appPath)
	seen := false
	for _, p := range strings.Split(paths, ";") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		seen = true
		joined := path.Join(filepath.ToSlash(appPath), p)
		if strings.HasPrefix(p, "/") {
			joined = path.Clean(p)
		}
		parts := splitPath(joined)
		if len(parts) > 0 && parts[0] == ".." {
			parts = nil // out of the checkout: all of it
		}
		n := 0
		for n < len(common) && n < len(parts) && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	if !seen || len(common) == 0 {
		return "."
	}
	return filepath.Join(common...)
}

// splitPath is a clean slash path's elements; none for the root.
func splitPath(p string) []string {
	p = strings.Trim(path.Clean(filepath.ToSlash(p)), "/")
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// body returns a reader of the archive from its start.
func (r *request) body() (io.Reader, error) {
	if _, err := r.archive.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return r.archive, nil
}

func (r *request) close() {
	_ = r.archive.Close()
	_ = os.Remove(r.archive.Name())
}
