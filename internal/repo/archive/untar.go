// Package archive unpacks tar streams into a directory without letting an
// entry land outside it (Git's archives of a commit, the tar.gz of a local
// directory a client uploads to be rendered), and packs a directory into a
// tar.gz (a checkout sent to a config management plugin).
package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Options bound what Untar writes.
type Options struct {
	// MaxBytes bounds the files' sizes added up. Required.
	MaxBytes int64
	// MaxEntries bounds the number of entries. Default: no bound.
	MaxEntries int
	// Symlinks keeps symbolic links as they are (to be checked by whoever
	// reads through them), as a Git checkout has them. Default false:
	// an archive holding a link, hard or symbolic, is refused, since a
	// later entry could be written through it.
	Symlinks bool
}

// Untar writes the tar stream r into dir. An entry whose path is absolute
// or climbs out of dir is refused, and so are links unless opts allow
// symbolic ones.
func Untar(r io.Reader, dir string, opts Options) error {
	tr := tar.NewReader(r)
	var total int64
	for n := 1; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if opts.MaxEntries > 0 && n > opts.MaxEntries {
			return fmt.Errorf("the archive has more than %d entries", opts.MaxEntries)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("archive entry %q escapes the directory", h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if total += h.Size; total > opts.MaxBytes {
				return fmt.Errorf("the archive's files are larger than the limit of %d bytes", opts.MaxBytes)
			}
			if err := writeFile(target, h.Mode, tr); err != nil {
				return err
			}
		case tar.TypeSymlink, tar.TypeLink:
			if !opts.Symlinks || h.Typeflag == tar.TypeLink {
				return fmt.Errorf("archive entry %q is a link, which is not accepted", h.Name)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		default:
			// pax headers, submodule entries and the like carry no files.
		}
	}
}

// writeFile writes one regular file, executable when the archive says so.
func writeFile(target string, mode int64, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
