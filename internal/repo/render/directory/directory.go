// Package directory renders a plain directory source: YAML and JSON
// manifests and Jsonnet programs, with Argo CD's recurse, include and
// exclude options.
package directory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// Render reads the manifests under path (relative to the checkout root) and
// returns their objects, files in lexical order. opts may be nil. env holds
// the build environment (ARGOCD_APP_NAME, …) that ${VAR} references in
// Jsonnet variables expand to.
func Render(ctx context.Context, root, path string, opts *v1alpha1.ApplicationSourceDirectory, env map[string]string, walk Walk) ([]*unstructured.Unstructured, error) {
	if opts == nil {
		opts = &v1alpha1.ApplicationSourceDirectory{}
	}
	files, err := Files(ctx, root, path, opts, walk)
	if err != nil {
		return nil, err
	}
	vm, err := newJsonnetVM(root, opts.Jsonnet, env)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		found, err := renderFile(vm, f.Path, f.Rel)
		if err != nil {
			return nil, err
		}
		objs = append(objs, found...)
	}
	return objs, nil
}

// EvaluatesJsonnet reports whether Render evaluates a Jsonnet program for
// the source: whether a manifest file it reads is a .jsonnet file. Without
// one, a render only parses YAML and JSON, within the limits below.
func EvaluatesJsonnet(ctx context.Context, root, path string, opts *v1alpha1.ApplicationSourceDirectory, walk Walk) (bool, error) {
	files, err := Files(ctx, root, path, opts, walk)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(files, func(f File) bool { return isJsonnet(f.Path) }), nil
}

// DefaultMaxCombinedBytes bounds the manifest files of one directory
// source, as Argo CD's reposerver.max.combined.directory.manifests.size
// does by default: 10M, a Kubernetes quantity, is 10,000,000 bytes.
const DefaultMaxCombinedBytes int64 = 10_000_000

// MaxFiles bounds the number of manifest files of one directory source.
var MaxFiles = 10000

// ErrTooLarge means a directory source holds more manifest files, or more
// bytes of them, than its limits allow.
var ErrTooLarge = errors.New("directory source over its limits")

// Walk is how the repo server walks directory sources.
type Walk struct {
	// IncludeHidden recurses into directories whose names start with a
	// dot, as Argo CD's ARGOCD_REPO_SERVER_INCLUDE_HIDDEN_DIRECTORIES.
	// Default false: they are skipped. Dot files are never manifests.
	IncludeHidden bool
	// NoJsonnet leaves .jsonnet files out, as argocd-cm's jsonnet.enable
	// "false". Default false: they are evaluated.
	NoJsonnet bool
	// MaxCombinedBytes bounds the manifest files of one source, checked
	// from their sizes before any is read. Default
	// DefaultMaxCombinedBytes.
	MaxCombinedBytes int64
}

// MaxBytes is w's bound on one source's manifest files.
func (w Walk) MaxBytes() int64 {
	if w.MaxCombinedBytes > 0 {
		return w.MaxCombinedBytes
	}
	return DefaultMaxCombinedBytes
}

// File is a manifest file of a directory source.
type File struct {
	// Path is the file's path; Rel is its path from the source directory.
	Path, Rel string
}

// Files lists the manifest files of the source directory path (inside
// root) that Render reads: recursing only with directory.recurse, and
// through directory.include and directory.exclude.
func Files(ctx context.Context, root, path string, opts *v1alpha1.ApplicationSourceDirectory, walk Walk) ([]File, error) {
	appDir, err := pathsafe.Join(root, path)
	if err != nil {
		return nil, err
	}
	if err := pathsafe.CheckTree(root, appDir); err != nil {
		return nil, err
	}
	rels, err := list(ctx, os.DirFS(appDir), path, opts, walk)
	if err != nil {
		return nil, err
	}
	files := make([]File, len(rels))
	for i, rel := range rels {
		rel = filepath.FromSlash(rel)
		files[i] = File{Path: filepath.Join(appDir, rel), Rel: rel}
	}
	return files, nil
}

// ErrJsonnet means a directory source given as a file system holds a
// Jsonnet program, which RenderFS does not evaluate: render its checkout.
var ErrJsonnet = errors.New("the directory holds Jsonnet programs")

// RenderFS renders a directory source of YAML and JSON manifests given as
// fsys, the source directory path of a commit, as Render renders it from
// a checkout; a Jsonnet program among its files fails with ErrJsonnet.
func RenderFS(ctx context.Context, fsys fs.FS, path string, opts *v1alpha1.ApplicationSourceDirectory, walk Walk) ([]*unstructured.Unstructured, error) {
	rels, err := list(ctx, fsys, path, opts, walk)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(rels, isJsonnet) {
		return nil, ErrJsonnet
	}
	var objs []*unstructured.Unstructured
	for _, rel := range rels {
		data, err := fs.ReadFile(fsys, rel)
		if err != nil {
			return nil, err
		}
		found, err := parseFile(rel, data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, found...)
	}
	return objs, nil
}

// list walks a source directory given as fsys, rooted at it, and returns
// the slash-separated paths of its manifest files in lexical order,
// within the limits above. path names the directory in errors.
func list(ctx context.Context, fsys fs.FS, path string, opts *v1alpha1.ApplicationSourceDirectory, walk Walk) ([]string, error) {
	if opts == nil {
		opts = &v1alpha1.ApplicationSourceDirectory{}
	}
	include, err := compileGlob("include", opts.Include)
	if err != nil {
		return nil, err
	}
	exclude, err := compileGlob("exclude", opts.Exclude)
	if err != nil {
		return nil, err
	}
	var files []string
	var total int64
	err = fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if rel != "." && (!opts.Recurse || (strings.HasPrefix(d.Name(), ".") && !walk.IncludeHidden)) {
				return fs.SkipDir
			}
			return nil
		}
		if !isManifestFile(d.Name(), opts.DisableExtensionFilter) || (walk.NoJsonnet && isJsonnet(d.Name())) {
			return nil
		}
		if exclude != nil && exclude.Match(rel) {
			return nil
		}
		if include != nil && !include.Match(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > walk.MaxBytes() {
			return fmt.Errorf("%w: the manifest files of %q are over %d bytes in all", ErrTooLarge, path, walk.MaxBytes())
		}
		if len(files) >= MaxFiles {
			return fmt.Errorf("%w: %q holds more than %d manifest files", ErrTooLarge, path, MaxFiles)
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// isJsonnet says whether a manifest file is a Jsonnet program.
func isJsonnet(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".jsonnet") }

// isManifestFile says whether a file name is one the directory renderer
// reads: one with a manifest's extension, or any name when anyExtension
// (directory.disableExtensionFilter). Dot files, such as the
// .argocd-source*.yaml parameter overrides, are never manifests.
func isManifestFile(name string, anyExtension bool) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	if anyExtension {
		return true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json", ".jsonnet":
		return true
	}
	return false
}

func compileGlob(what, pattern string) (*glob.Pattern, error) {
	if pattern == "" {
		return nil, nil
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("directory.%s %q: %w", what, pattern, err)
	}
	return g, nil
}

func renderFile(vm *jsonnetVM, path, rel string) ([]*unstructured.Unstructured, error) {
	if isJsonnet(path) {
		return vm.evaluate(path, rel)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseFile(rel, data)
}

// parseFile reads the objects of a YAML or JSON manifest file.
func parseFile(rel string, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := manifest.Parse(rel, data)
	if err == nil {
		return objs, nil
	}
	// A YAML file that is not a manifest (values, configuration) is skipped
	// unless the file clearly meant to hold objects, as Argo CD does.
	if len(objs) == 0 && (errors.Is(err, manifest.ErrNotManifest) || !manifest.LooksLikeManifest(data)) {
		return nil, nil
	}
	return nil, err
}
