package kustomize

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// boundedFS is the disk, read-only to Kustomize's eyes, limited to one
// checkout, with some files' contents replaced in memory.
type boundedFS struct {
	filesys.FileSystem
	root      string
	overrides map[string][]byte

	mu sync.Mutex
	// refused is the first access outside the root. Kustomize reports some
	// refused reads as "file not found"; Render reports this instead.
	refused error
}

func (b *boundedFS) refusal() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

func (b *boundedFS) check(path string) error {
	err := b.within(path)
	if err != nil {
		b.mu.Lock()
		if b.refused == nil {
			b.refused = err
		}
		b.mu.Unlock()
	}
	return err
}

func (b *boundedFS) within(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		resolved = abs // missing files fail later with their own error
	}
	if !pathsafe.Within(b.root, resolved) {
		return fmt.Errorf("%w: %s", pathsafe.ErrOutOfBounds, path)
	}
	return nil
}

func (b *boundedFS) ReadFile(path string) ([]byte, error) {
	if err := b.check(path); err != nil {
		return nil, err
	}
	if data, ok := b.overrides[path]; ok {
		return bytes.Clone(data), nil
	}
	return b.FileSystem.ReadFile(path)
}

func (b *boundedFS) Open(path string) (filesys.File, error) {
	if err := b.check(path); err != nil {
		return nil, err
	}
	if _, ok := b.overrides[path]; ok {
		return nil, fmt.Errorf("open %s: not supported for an edited kustomization", path)
	}
	return b.FileSystem.Open(path)
}

func (b *boundedFS) ReadDir(path string) ([]string, error) {
	if err := b.check(path); err != nil {
		return nil, err
	}
	return b.FileSystem.ReadDir(path)
}

func (b *boundedFS) Exists(path string) bool {
	return b.check(path) == nil && b.FileSystem.Exists(path)
}

func (b *boundedFS) IsDir(path string) bool {
	return b.check(path) == nil && b.FileSystem.IsDir(path)
}

func (b *boundedFS) Glob(pattern string) ([]string, error) {
	if err := b.check(filepath.Dir(pattern)); err != nil {
		return nil, err
	}
	return b.FileSystem.Glob(pattern)
}

// Writes never reach the shared checkout.
func (b *boundedFS) WriteFile(path string, _ []byte) error {
	return fmt.Errorf("write %s: the checkout is read-only", path)
}

func (b *boundedFS) Create(path string) (filesys.File, error) {
	return nil, fmt.Errorf("create %s: the checkout is read-only", path)
}

func (b *boundedFS) RemoveAll(path string) error {
	return fmt.Errorf("remove %s: the checkout is read-only", path)
}
