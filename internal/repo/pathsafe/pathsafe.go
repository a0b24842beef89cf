// Package pathsafe keeps file access inside a repository checkout. Every path
// that comes from an Application (source path, value files, Kustomize and
// Jsonnet references) goes through it: `..` traversal, absolute paths and
// symbolic links that lead outside the checkout are refused. Every write
// into a work tree goes through a Tree, an os.Root that writes through no
// symbolic link at all.
package pathsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutOfBounds means a path leads outside the repository.
var ErrOutOfBounds = errors.New("path leads outside the repository")

// Join resolves rel inside root, following symbolic links, and returns the
// absolute result. It refuses absolute paths and anything that resolves
// outside root. A path that does not exist is resolved as far as it exists.
func Join(root, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %q is absolute", ErrOutOfBounds, rel)
	}
	realRoot, err := Root(root)
	if err != nil {
		return "", err
	}
	joined := filepath.Join(realRoot, rel)
	if !Within(realRoot, joined) {
		return "", fmt.Errorf("%w: %q", ErrOutOfBounds, rel)
	}
	resolved, err := evalExisting(joined)
	if err != nil {
		return "", err
	}
	if !Within(realRoot, resolved) {
		return "", fmt.Errorf("%w: %q is a symbolic link to %s", ErrOutOfBounds, rel, resolved)
	}
	return resolved, nil
}

// Root returns root as an absolute path with its symbolic links resolved,
// the form Within compares against.
func Root(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Within reports whether path is root or below it (both cleaned, absolute).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// evalExisting resolves symbolic links in the longest existing prefix of path
// and appends the rest unchanged.
func evalExisting(path string) (string, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err == nil {
		return resolved, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path, nil
	}
	head, err := evalExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(head, filepath.Base(path)), nil
}

// CheckTree walks dir and refuses any symbolic link in it that resolves
// outside root (or does not resolve at all). Run it on a source path before
// rendering, as Argo CD does, so no renderer can read through such a link.
func CheckTree(root, dir string) error {
	realRoot, err := Root(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			link, _ := os.Readlink(path)
			return fmt.Errorf("%w: symbolic link %q to %q cannot be resolved", ErrOutOfBounds, rel, link)
		}
		if !Within(realRoot, target) {
			link, _ := os.Readlink(path)
			return fmt.Errorf("%w: symbolic link %q points to %q", ErrOutOfBounds, rel, link)
		}
		return nil
	})
}
