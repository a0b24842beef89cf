package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// prepare packs src's checkout for sending.
func (c *Client) prepare(src *Source) (*request, error) {
	if _, err := pathsafe.Join(src.Root, src.Path); err != nil {
		return nil, err
	}
	env, err := environ(src)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "capstan-plugin-*.tgz")
	if err != nil {
		return nil, err
	}
	req := &request{archive: f, env: env, appPath: filepath.Clean(src.Path)}
	req.appName = filepath.Base(filepath.Join(src.Root, src.Path))
	if err := req.pack(src.Root, c.opts); err != nil {
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
