package archive

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// PackOptions choose and bound what Tgz packs.
type PackOptions struct {
	// MaxBytes bounds the files' sizes added up. Required.
	MaxBytes int64
	// Exclude are shell globs (path.Match syntax) matched against each
	// entry's path relative to the directory; a matching file is left out,
	// a matching directory with all it holds. Default: none.
	Exclude []string
}

// Tgz writes dir as a gzip-compressed tar stream to w: directories, regular
// files and symbolic links (as links, not followed), under paths relative
// to dir. It returns how many regular files it wrote.
func Tgz(w io.Writer, dir string, opts PackOptions) (int, error) {
	for _, g := range opts.Exclude {
		if _, err := filepath.Match(g, ""); err != nil {
			return 0, fmt.Errorf("exclusion %q: %w", g, err)
		}
	}
	gz := gzip.NewWriter(w)
	n, err := pack(gz, dir, opts)
	return n, errors.Join(err, gz.Close())
}

// pack writes dir as a tar stream to w.
func pack(w io.Writer, dir string, opts PackOptions) (int, error) {
	tw := tar.NewWriter(w)
	p := packer{tw: tw, dir: dir, opts: opts}
	err := filepath.WalkDir(dir, p.add)
	return p.files, errors.Join(err, tw.Close())
}

type packer struct {
	tw    *tar.Writer
	dir   string
	opts  PackOptions
	total int64
	files int
}

func (p *packer) add(path string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(p.dir, path)
	if err != nil || rel == "." {
		return err
	}
	if p.excluded(rel) {
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	info, err := d.Info()
	if err != nil {
		return err
	}
	link := ""
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		if link, err = os.Readlink(path); err != nil {
			return err
		}
	case info.Mode().IsRegular():
		if p.total += info.Size(); p.total > p.opts.MaxBytes {
			return fmt.Errorf("the files of %s are larger than the limit of %d bytes", filepath.Base(p.dir), p.opts.MaxBytes)
		}
	case !info.IsDir():
		return nil // sockets, devices and pipes are not part of a source
	}
	h, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	h.Name = filepath.ToSlash(rel)
	h.Uname, h.Gname = "", ""
	if err := p.tw.WriteHeader(h); err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	return p.copyFile(path, info.Size())
}

func (p *packer) copyFile(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// A file that grew since it was measured still writes only its header's size.
	if _, err := io.CopyN(p.tw, f, size); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	p.files++
	return nil
}

func (p *packer) excluded(rel string) bool {
	for _, g := range p.opts.Exclude {
		if ok, _ := filepath.Match(g, rel); ok {
			return true
		}
	}
	return false
}
