package kustomize

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/repo/archive"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/repo/render/program"
)

// Binary is a Kustomize program to build with in place of the built-in
// Kustomize: the one argocd-cm registers (kustomize.path.<version>) for
// the version a source names.
type Binary struct {
	// Path is the program.
	Path string
	// Args are its build flags (kustomize.buildOptions.<version>), passed
	// after the kustomization's directory.
	Args []string
}

// Bounds of a build by a Binary: the checkout it is copied from was
// bounded when it was extracted; its output is held whole before parsing.
const (
	maxBinaryCopy   = 4 << 30
	maxBinaryOutput = 256 << 20
)

// buildWith runs `<binary> build <dir> <args>` on a private copy of the
// checkout (the program may write into it, as Kustomize does when it pulls
// charts), with the source's overrides written into the copy's
// kustomization, and the build environment added to the program's.
func buildWith(ctx context.Context, b *Binary, root, appDir, kfile string, edited []byte, env map[string]string) ([]*unstructured.Unstructured, error) {
	tmp, err := os.MkdirTemp("", "kustomize-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "checkout")
	if err := archive.Copy(root, work, maxBinaryCopy); err != nil {
		return nil, fmt.Errorf("copying the checkout: %w", err)
	}
	rel, err := filepath.Rel(root, appDir)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(work, rel)
	if edited != nil {
		if err := writeInto(work, filepath.Join(rel, filepath.Base(kfile)), edited); err != nil {
			return nil, fmt.Errorf("writing the source's overrides into the copy: %w", err)
		}
	}
	// The directory is absolute: no repository's path reads as a flag.
	argv := append([]string{b.Path, "build", dir}, b.Args...)
	out, err := program.Run(ctx, program.Command{Argv: argv, Dir: dir, Env: environ(env), MaxOutput: maxBinaryOutput})
	if err != nil {
		return nil, err
	}
	return manifest.Parse("kustomize build output", out)
}

// writeInto writes a file of the private copy at dir, in place of the
// file or link there (a kustomization linked from elsewhere is edited
// for this build only), through no link.
func writeInto(dir, name string, data []byte) error {
	tree, err := pathsafe.OpenTree(dir)
	if err != nil {
		return err
	}
	defer tree.Close()
	if err := tree.Unlink(name); err != nil {
		return err
	}
	return tree.WriteFile(name, data, 0o644)
}

// environ is env as NAME=value lines, sorted.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
