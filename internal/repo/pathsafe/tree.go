package pathsafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrLink refuses a write whose path passes through a symbolic link.
var ErrLink = errors.New("path passes through a symbolic link")

// Tree writes into a work tree Capstan owns (a checkout the hydrator or
// the image updater commits from, a private copy a renderer edits)
// through an os.Root: no path, `..` or symbolic link a repository holds
// (committed, or dangling) can lead a write, create, truncation or removal
// outside it. Stricter still, no write goes through a link at all, even
// one that stays inside: a repository cannot make one file's write land
// on another.
type Tree struct {
	root *os.Root
	dir  string
}

// OpenTree opens the work tree at dir.
func OpenTree(dir string) (*Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Tree{root: root, dir: dir}, nil
}

// Close releases the tree.
func (t *Tree) Close() error { return t.root.Close() }

// clean checks a path relative to the tree: not absolute, not leaving it.
func clean(name string) (string, error) {
	if filepath.IsAbs(name) || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%w: %q", ErrOutOfBounds, name)
	}
	c := path.Clean(filepath.ToSlash(name))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: %q", ErrOutOfBounds, name)
	}
	return c, nil
}

// noLinks refuses a path any existing component of which is a symbolic
// link; it reports whether the whole path exists.
func (t *Tree) noLinks(name string) (bool, error) {
	parts := strings.Split(name, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		info, err := t.root.Lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return false, fmt.Errorf("%w: %q (at %q)", ErrLink, name, prefix)
		}
	}
	return true, nil
}

// WriteFile writes data to name, creating it and its directories.
func (t *Tree) WriteFile(name string, data []byte, perm fs.FileMode) error {
	name, err := clean(name)
	if err != nil {
		return err
	}
	if _, err := t.noLinks(name); err != nil {
		return err
	}
	if dir := path.Dir(name); dir != "." {
		if err := t.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := t.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// ReadFile reads name, at most max bytes of it.
func (t *Tree) ReadFile(name string, max int64) ([]byte, error) {
	name, err := clean(name)
	if err != nil {
		return nil, err
	}
	if _, err := t.noLinks(name); err != nil {
		return nil, err
	}
	f, err := t.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return data, err
}

// Stat describes name, following no link.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	name, err := clean(name)
	if err != nil {
		return nil, err
	}
	if _, err := t.noLinks(name); err != nil {
		return nil, err
	}
	return t.root.Lstat(name)
}

// RemoveAll removes name and what it holds (nothing when it is missing).
func (t *Tree) RemoveAll(name string) error {
	name, err := clean(name)
	if err != nil {
		return err
	}
	if exists, err := t.noLinks(name); err != nil || !exists {
		return err
	}
	return t.root.RemoveAll(name)
}

// Unlink removes name when it is a symbolic link (not what it points to),
// so that a file can be written in its place; the directories on the way
// must not be links.
func (t *Tree) Unlink(name string) error {
	name, err := clean(name)
	if err != nil {
		return err
	}
	if dir := path.Dir(name); dir != "." {
		if exists, err := t.noLinks(dir); err != nil || !exists {
			return err
		}
	}
	info, err := t.root.Lstat(name)
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	return t.root.Remove(name)
}
