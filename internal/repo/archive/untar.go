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
	"path"
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
	// an archive holding a link, hard or symbolic, is refused.
	Symlinks bool
	// GitDirs accepts entries inside a ".git" directory, as a plugin's copy
	// of a working tree may hold. Default false: they are refused, since a
	// Git tree never holds one and a fake one would steer git run there.
	GitDirs bool
}

// Untar writes the tar stream r into dir (made when missing; it should be
// empty). Every entry is written beneath dir through an os.Root, so no
// path, however built, resolves outside it. Refused, with the entry named:
// a path that is absolute or climbs out; a path with a ".git" element
// (unless opts allow it); an
// entry named twice; an entry beneath a symbolic link of the same archive
// (a link is never written through); hard links; and symbolic links unless
// opts allow them.
func Untar(r io.Reader, dir string, opts Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	x := extraction{root: root, opts: opts, seen: map[string]byte{}, made: map[string]bool{".": true}}
	defer x.closeDir()
	tr := tar.NewReader(r)
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
		if err := x.entry(h, tr); err != nil {
			return err
		}
	}
}

// extraction is one Untar in progress: what it has written so far.
type extraction struct {
	root  *os.Root
	opts  Options
	total int64
	// seen maps each path written to its type flag (tar.TypeDir for
	// directories made on the way to a file).
	seen map[string]byte
	// made are the directories known to exist (syscalls are what an
	// extraction costs: none is repeated for a directory made already).
	made map[string]bool
	// dir is the directory the last file went to, opened as a root of
	// its own, so the next file there is one openat rather than one per
	// path element (an archive lists a directory's files together).
	dir     *os.Root
	dirName string
}

// closeDir closes the directory of the last file, if open.
func (x *extraction) closeDir() {
	if x.dir != nil {
		_ = x.dir.Close()
		x.dir, x.dirName = nil, ""
	}
}

// entry writes one archive entry.
func (x *extraction) entry(h *tar.Header, body io.Reader) error {
	if !carriesFile(h.Typeflag) {
		return nil // pax headers, submodule entries and the like carry no files
	}
	if h.Typeflag == tar.TypeDir && path.Clean(h.Name) == "." {
		return nil // the directory itself, as tar and Argo CD's CLI write it
	}
	name, err := entryPath(h.Name, x.opts.GitDirs)
	if err != nil {
		return err
	}
	if err := x.claim(name, h.Typeflag); err != nil {
		return err
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return x.mkdirAll(name)
	case tar.TypeReg:
		if x.total += h.Size; x.total > x.opts.MaxBytes {
			return fmt.Errorf("the archive's files are larger than the limit of %d bytes", x.opts.MaxBytes)
		}
		return x.writeFile(name, h.Mode, body)
	default: // tar.TypeSymlink, tar.TypeLink
		if !x.opts.Symlinks || h.Typeflag == tar.TypeLink {
			return fmt.Errorf("archive entry %q is a link, which is not accepted", h.Name)
		}
		if err := x.mkdirParent(name); err != nil {
			return err
		}
		return x.root.Symlink(h.Linkname, name)
	}
}

// carriesFile reports whether an entry of this type puts something on disk.
func carriesFile(flag byte) bool {
	switch flag {
	case tar.TypeDir, tar.TypeReg, tar.TypeSymlink, tar.TypeLink:
		return true
	}
	return false
}

// entryPath is an entry's name as a clean relative path, or why it is refused.
func entryPath(raw string, gitDirs bool) (string, error) {
	name := path.Clean(strings.TrimSuffix(raw, "/"))
	if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("archive entry %q escapes the directory", raw)
	}
	for _, elem := range strings.Split(name, "/") {
		if !gitDirs && strings.EqualFold(elem, ".git") {
			return "", fmt.Errorf("archive entry %q is inside a .git directory, which is not accepted", raw)
		}
	}
	return name, nil
}

// claim records name as written with the given type, refusing a name
// already written (a directory may be named again) and a name beneath a
// symbolic link or a file of this archive.
func (x *extraction) claim(name string, flag byte) error {
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		switch x.seen[dir] {
		case 0, tar.TypeDir:
		case tar.TypeSymlink:
			return fmt.Errorf("archive entry %q is beneath the symbolic link %q, which is not written through", name, dir)
		default:
			return fmt.Errorf("archive entry %q is beneath the file %q", name, dir)
		}
	}
	if prev, ok := x.seen[name]; ok && !(prev == tar.TypeDir && flag == tar.TypeDir) {
		return fmt.Errorf("archive entry %q appears twice", name)
	}
	x.seen[name] = flag
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if _, ok := x.seen[dir]; ok {
			break
		}
		x.seen[dir] = tar.TypeDir
	}
	return nil
}

// mkdirParent makes the directories leading to name.
func (x *extraction) mkdirParent(name string) error {
	return x.mkdirAll(path.Dir(name))
}

// mkdirAll makes directory name and those leading to it: one mkdirat
// when its parent is known to exist, nothing when it is.
func (x *extraction) mkdirAll(name string) error {
	if x.made[name] {
		return nil
	}
	var err error
	if x.made[path.Dir(name)] {
		if err = x.root.Mkdir(name, 0o755); errors.Is(err, os.ErrExist) {
			err = x.root.MkdirAll(name, 0o755) // a directory, or the error that it is not
		}
	} else {
		err = x.root.MkdirAll(name, 0o755)
	}
	if err != nil {
		return err
	}
	x.made[name] = true
	return nil
}

// openDir returns directory name, opened beneath the root.
func (x *extraction) openDir(name string) (*os.Root, error) {
	if name == "." {
		return x.root, nil
	}
	if x.dir != nil && x.dirName == name {
		return x.dir, nil
	}
	x.closeDir()
	d, err := x.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	x.dir, x.dirName = d, name
	return d, nil
}

// writeFile writes one regular file, executable when the archive says so.
// O_EXCL: a file is created, never opened through something already there.
func (x *extraction) writeFile(name string, mode int64, r io.Reader) error {
	if err := x.mkdirParent(name); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	dir, err := x.openDir(path.Dir(name))
	if err != nil {
		return err
	}
	f, err := dir.OpenFile(path.Base(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
