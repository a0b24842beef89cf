package kustomize

import (
	"bytes"
	"fmt"
	"os"
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
	// mounts are charts fetched for the build's helmCharts, read where
	// Kustomize expects them unpacked.
	mounts *mounts

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

// mounted is where a path checked to be in the checkout is read from: a
// fetched chart's copy when it is one's.
func (b *boundedFS) mounted(path string) string {
	if b.mounts == nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, ok := b.mounts.resolve(abs); ok {
		return real
	}
	return path
}

// CleanedAbs is the disk's, but a fetched chart's files keep the path
// Kustomize expects them at (its copy is elsewhere, and links are not
// followed out of it).
func (b *boundedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if real := b.mounted(path); real != path {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", "", err
		}
		if st, err := os.Stat(real); err == nil && st.IsDir() {
			return filesys.ConfirmedDir(abs), "", nil
		}
		return filesys.ConfirmedDir(filepath.Dir(abs)), filepath.Base(abs), nil
	}
	return b.FileSystem.CleanedAbs(path)
}

func (b *boundedFS) ReadFile(path string) ([]byte, error) {
	if err := b.check(path); err != nil {
		return nil, err
	}
	if data, ok := b.overrides[path]; ok {
		return bytes.Clone(data), nil
	}
	return b.FileSystem.ReadFile(b.mounted(path))
}

func (b *boundedFS) Open(path string) (filesys.File, error) {
	if err := b.check(path); err != nil {
		return nil, err
	}
	if _, ok := b.overrides[path]; ok {
		return nil, fmt.Errorf("open %s: not supported for an edited kustomization", path)
	}
	return b.FileSystem.Open(b.mounted(path))
}

func (b *boundedFS) ReadDir(path string) ([]string, error) {
	if err := b.check(path); err != nil {
		return nil, err
	}
	return b.FileSystem.ReadDir(b.mounted(path))
}

func (b *boundedFS) Exists(path string) bool {
	return b.check(path) == nil && b.FileSystem.Exists(b.mounted(path))
}

func (b *boundedFS) IsDir(path string) bool {
	return b.check(path) == nil && b.FileSystem.IsDir(b.mounted(path))
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
