package repo

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gobwas/glob"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
)

// Bounds of what the Git generator's calls return.
const (
	// MaxGitFile bounds one file GitFiles returns.
	MaxGitFile = 1 << 20
	// MaxGitFiles bounds the bytes of all files one GitFiles call returns.
	MaxGitFiles = 16 << 20
)

// GitLister lists what a Git revision holds, for the ApplicationSet
// controller's Git generator.
type GitLister interface {
	GitDirectories(ctx context.Context, req *GitDirectoriesRequest) (*GitDirectoriesResponse, error)
	GitFiles(ctx context.Context, req *GitFilesRequest) (*GitFilesResponse, error)
}

// GitDirectoriesRequest names a revision whose directories are listed.
type GitDirectoriesRequest struct {
	RepoURL  string `json:"repoURL"`
	Revision string `json:"revision"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// GitDirectoriesResponse lists a revision's directories, slash-separated
// and relative to the root, sorted; hidden directories (a name starting
// with a dot) and what they hold are left out.
type GitDirectoriesResponse struct {
	Revision string   `json:"revision"`
	Paths    []string `json:"paths,omitempty"`
}

// GitFilesRequest names the files of a revision matching globs.
type GitFilesRequest struct {
	RepoURL  string `json:"repoURL"`
	Revision string `json:"revision"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
	// Patterns are globs over slash-separated paths from the root; a file
	// is returned when it matches one of them and none of Exclude. As in a
	// git pathspec, "*" also matches "/" unless PathAware is set; then "*"
	// stays within one directory and "**" crosses them.
	Patterns  []string `json:"patterns"`
	Exclude   []string `json:"exclude,omitempty"`
	PathAware bool     `json:"pathAware,omitempty"`
}

// GitFilesResponse holds the matching files' contents by path.
type GitFilesResponse struct {
	Revision string            `json:"revision"`
	Files    map[string][]byte `json:"files,omitempty"`
}

// freshCheckout resolves a revision without reusing a recent ls-remote,
// since a generator asks for what the branch holds now, and returns its
// files' directory and the commit. An OCI artifact's (an oci:// URL, for
// the OCI generator) is resolved to its digest and unpacked.
func (s *Service) freshCheckout(ctx context.Context, repoURL, revision, project string) (string, string, error) {
	if ocisource.IsSource(v1alpha1.ApplicationSource{RepoURL: repoURL}) {
		creds, err := s.opts.Credentials.ForRepo(ctx, repoURL, project)
		if err != nil {
			return "", "", fmt.Errorf("credentials for %s: %w", repoURL, err)
		}
		digest, err := s.oci.Resolve(ctx, repoURL, revision, creds, true)
		if err != nil {
			return "", "", err
		}
		dir, err := s.oci.Fetch(ctx, repoURL, digest, creds)
		return dir, digest, err
	}
	repo, err := s.gitRepo(ctx, repoURL, revision, project)
	if err != nil {
		return "", "", err
	}
	sha, err := repo.ResolveFresh(ctx, revision)
	if err != nil {
		return "", "", err
	}
	dir, err := repo.Checkout(ctx, sha)
	return dir, sha, err
}

// GitDirectories lists the directories of a revision.
func (s *Service) GitDirectories(ctx context.Context, req *GitDirectoriesRequest) (*GitDirectoriesResponse, error) {
	root, sha, err := s.freshCheckout(ctx, req.RepoURL, req.Revision, req.Project)
	if err != nil {
		return nil, err
	}
	out := &GitDirectoriesResponse{Revision: sha}
	err = walkCheckout(root, func(rel string, d fs.DirEntry) error {
		if d.IsDir() {
			out.Paths = append(out.Paths, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing directories of %s: %w", git.RedactURL(req.RepoURL), err)
	}
	sort.Strings(out.Paths)
	return out, nil
}

// GitFiles returns the regular files of a revision whose paths match the
// request's pattern, each at most MaxGitFile bytes and all together at
// most MaxGitFiles.
func (s *Service) GitFiles(ctx context.Context, req *GitFilesRequest) (*GitFilesResponse, error) {
	include, err := compileGlobs(req.Patterns, req.PathAware)
	if err != nil {
		return nil, err
	}
	exclude, err := compileGlobs(req.Exclude, req.PathAware)
	if err != nil {
		return nil, err
	}
	root, sha, err := s.freshCheckout(ctx, req.RepoURL, req.Revision, req.Project)
	if err != nil {
		return nil, err
	}
	out := &GitFilesResponse{Revision: sha, Files: map[string][]byte{}}
	total := 0
	err = walkCheckout(root, func(rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() || !anyMatch(include, rel) || anyMatch(exclude, rel) {
			return nil
		}
		data, err := readBounded(filepath.Join(root, filepath.FromSlash(rel)), MaxGitFile)
		if err != nil {
			return err
		}
		if total += len(data); total > MaxGitFiles {
			return fmt.Errorf("the files matching %q are over %d bytes together", req.Patterns, MaxGitFiles)
		}
		out.Files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading files of %s: %w", git.RedactURL(req.RepoURL), err)
	}
	return out, nil
}

// compileGlobs compiles file patterns, "/" a separator when pathAware.
func compileGlobs(patterns []string, pathAware bool) ([]*glob.Pattern, error) {
	var seps []rune
	if pathAware {
		seps = []rune{'/'}
	}
	out := make([]*glob.Pattern, 0, len(patterns))
	for _, p := range patterns {
		g, err := glob.Compile(p, seps...)
		if err != nil {
			return nil, fmt.Errorf("file pattern %q: %w", p, err)
		}
		out = append(out, g)
	}
	return out, nil
}

func anyMatch(globs []*glob.Pattern, s string) bool {
	for _, g := range globs {
		if g.Match(s) {
			return true
		}
	}
	return false
}

// walkCheckout calls visit with every file and directory below root (not
// root itself), by slash-separated relative path, skipping hidden
// directories and stopping past maxExploredFiles entries.
func walkCheckout(root string, visit func(rel string, d fs.DirEntry) error) error {
	seen := 0
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			return nil
		}
		if seen++; seen > maxExploredFiles {
			return errWalkBound
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return visit(filepath.ToSlash(rel), d)
	})
}
