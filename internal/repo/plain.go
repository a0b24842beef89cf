package repo

import (
	"context"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
)

// renderFromObjects renders a Git source that is a plain directory of YAML
// and JSON manifests straight from its commit's objects, without checking
// the commit out: a monorepo of a thousand applications then costs no
// thousands of files written per commit, only the few each source reads.
// It reports false, having rendered nothing, whenever the source needs its
// checkout — a Helm chart, a Kustomization, Jsonnet, a plugin, a symbolic
// link or submodule, or any error, which the checkout's render then
// reports in its own words — so whatever it renders is exactly what the
// checkout would give. Its only error is ctx's.
func (s *Service) renderFromObjects(ctx context.Context, src resolved, req *Request) ([]*unstructured.Unstructured, bool, error) {
	dir, ok := treePath(src.source.Path)
	if !ok || src.repo == nil || src.source.Chart != "" || s.plugins.Installed() {
		return nil, false, nil
	}
	if typ, err := explicitType(&src.source); err != nil || (typ != "" && typ != v1alpha1.SourceTypeDirectory) {
		return nil, false, nil
	}
	release, err := s.turn(ctx)
	if err != nil {
		return nil, false, err
	}
	defer release()
	objs, ok := s.plainObjects(ctx, src, dir, req)
	return objs, ok, ctx.Err()
}

func (s *Service) plainObjects(ctx context.Context, src resolved, dir string, req *Request) ([]*unstructured.Unstructured, bool) {
	tree, err := src.repo.Tree(ctx, src.revision, s.opts.Directories.MaxBytes())
	if err != nil {
		return nil, false
	}
	if _, err := fs.Stat(tree, ".gitmodules"); err == nil && s.opts.Submodules {
		return nil, false // submodules are in the checkout only
	}
	appDir, err := fs.Sub(tree, dir)
	if err != nil {
		return nil, false
	}
	entries, err := fs.ReadDir(appDir, ".")
	if err != nil || slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Type()&(fs.ModeSymlink|fs.ModeIrregular) != 0 }) {
		return nil, false
	}
	source := src.source
	if mergeOverrideFiles(&source, appDir, req.AppName) != nil {
		return nil, false
	}
	if typ, err := sourceType(&source, appDir); err != nil || typ != v1alpha1.SourceTypeDirectory {
		return nil, false
	}
	objs, err := directory.RenderFS(ctx, appDir, source.Path, source.Directory, s.opts.Directories)
	if err != nil {
		return nil, false
	}
	return objs, true
}

// treePath is a source path as a path inside a commit's tree, when it
// plainly names one: relative, and not climbing out of the repository.
func treePath(p string) (string, bool) {
	if strings.HasPrefix(p, "/") {
		return "", false
	}
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
		return "", false
	}
	return p, true
}
