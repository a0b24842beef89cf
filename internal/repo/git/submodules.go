package git

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/internal/repo/archive"
)

// Bounds of the submodules one checkout takes in.
const (
	// maxSubmodules bounds the submodules of one checkout, at every depth
	// together.
	maxSubmodules = 50
	// maxSubmoduleDepth bounds how deep submodules of submodules go.
	maxSubmoduleDepth = 5
)

// submoduleSchemes are the transports a submodule may be fetched over: a
// .gitmodules file is the repository's to write, so it may not point at
// the repo server's own disk (file://), as git itself refuses by default.
var submoduleSchemes = []string{"https", "http", "ssh", "git"}

// Submodule is a submodule of a commit: where it goes, what it is fetched
// from and the commit the parent pins.
type Submodule struct {
	Path, URL, Commit string
}

// Submodules lists the submodules of commit sha: each .gitmodules entry
// whose path is a gitlink of its tree, with a URL relative to the
// repository's made absolute. None when the commit has no .gitmodules.
func (r *Repo) Submodules(ctx context.Context, sha string) ([]Submodule, error) {
	if err := r.ensureCommit(ctx, sha); err != nil {
		return nil, err
	}
	if _, err := r.git(ctx, true, "cat-file", "-e", sha+":.gitmodules"); err != nil {
		return nil, nil
	}
	out, err := r.git(ctx, true, "config", "--blob", sha+":.gitmodules", "--null", "--get-regexp", `^submodule\..*\.(path|url)$`)
	if err != nil {
		return nil, nil // no entry with a path or URL
	}
	entries := map[string]*Submodule{}
	var names []string
	for _, kv := range bytes.Split(out, []byte{0}) {
		key, value, ok := strings.Cut(string(kv), "\n")
		if !ok {
			continue
		}
		name, field := key[len("submodule."):strings.LastIndex(key, ".")], key[strings.LastIndex(key, ".")+1:]
		s := entries[name]
		if s == nil {
			s = &Submodule{}
			entries[name] = s
			names = append(names, name)
		}
		if field == "path" {
			s.Path = value
		} else {
			s.URL = value
		}
	}
	var subs []Submodule
	for _, name := range names {
		s := entries[name]
		if s.Path == "" || s.URL == "" {
			continue
		}
		if s.Commit, err = r.gitlink(ctx, sha, s.Path); err != nil || s.Commit == "" {
			continue // not a gitlink of this commit: git would skip it too
		}
		if s.URL, err = r.submoduleURL(s.URL); err != nil {
			return nil, fmt.Errorf("submodule %q of %s at %s: %w", s.Path, RedactURL(r.url), sha, err)
		}
		subs = append(subs, *s)
	}
	return subs, nil
}

// gitlink is the commit a tree pins at p, empty when p is not a gitlink.
func (r *Repo) gitlink(ctx context.Context, sha, p string) (string, error) {
	out, err := r.git(ctx, true, "ls-tree", "-z", sha, "--", p)
	if err != nil {
		return "", err
	}
	line := strings.TrimSuffix(string(out), "\x00")
	meta, _, ok := strings.Cut(line, "\t")
	if f := strings.Fields(meta); ok && len(f) == 3 && f[0] == "160000" && f[1] == "commit" && fullSHA.MatchString(f[2]) {
		return f[2], nil
	}
	return "", nil
}

// submoduleURL makes a submodule's URL absolute (../other.git is beside
// the repository) and refuses what it may not be fetched from.
func (r *Repo) submoduleURL(raw string) (string, error) {
	if strings.HasPrefix(raw, "./") || strings.HasPrefix(raw, "../") {
		base, err := url.Parse(strings.TrimSuffix(r.url, "/"))
		if err != nil || base.Scheme == "" {
			return "", fmt.Errorf("relative URL %q needs a parent URL with a scheme", raw)
		}
		base.Path = path.Join(base.Path, raw)
		raw = base.String()
	}
	if err := ValidateURL(raw); err != nil {
		return "", err
	}
	scheme, _, ok := strings.Cut(raw, "://")
	if ok && !slices.Contains(submoduleSchemes, strings.ToLower(scheme)) {
		return "", fmt.Errorf("%w %q: a submodule may be fetched over %s only", ErrInvalidURL, RedactURL(raw), strings.Join(submoduleSchemes, ", "))
	}
	return raw, nil
}

// CheckoutRecursive is Checkout with the commit's submodules, and theirs,
// checked out in place, as `git submodule update --init --recursive` in
// Argo CD's repo server. A submodule on the repository's own host is
// fetched with its credentials; one elsewhere without any, so no
// repository's secret reaches a host its .gitmodules names. The directory
// is made once per commit and must be treated as read-only.
func (s *Store) CheckoutRecursive(ctx context.Context, r *Repo, sha string) (string, error) {
	subs, err := r.Submodules(ctx, sha)
	if err != nil || len(subs) == 0 {
		if err != nil {
			return "", err
		}
		return r.Checkout(ctx, sha)
	}
	dst := filepath.Join(r.dir, "checkouts", sha+"+modules")
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	tmp := dst + ".partial"
	_ = os.RemoveAll(tmp)
	budget := maxSubmodules
	if err := s.assemble(ctx, r, sha, tmp, 0, &budget); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.RemoveAll(tmp)
		if _, statErr := os.Stat(dst); statErr == nil {
			return dst, nil
		}
		return "", err
	}
	return dst, nil
}

// assemble writes commit sha of r, and its submodules, into dir.
func (s *Store) assemble(ctx context.Context, r *Repo, sha, dir string, depth int, budget *int) error {
	src, err := r.Checkout(ctx, sha)
	if err != nil {
		return err
	}
	if err := archive.Copy(src, dir, r.opts.MaxCheckoutBytes); err != nil {
		return fmt.Errorf("copying %s of %s: %w", sha, RedactURL(r.url), err)
	}
	subs, err := r.Submodules(ctx, sha)
	if err != nil {
		return err
	}
	if len(subs) > 0 && depth >= maxSubmoduleDepth {
		return fmt.Errorf("submodules of %s nest deeper than %d", RedactURL(r.url), maxSubmoduleDepth)
	}
	for _, sub := range subs {
		if *budget--; *budget < 0 {
			return fmt.Errorf("more than %d submodules", maxSubmodules)
		}
		target, err := joinInside(dir, sub.Path)
		if err != nil {
			return fmt.Errorf("submodule %q of %s: %w", sub.Path, RedactURL(r.url), err)
		}
		if err := os.RemoveAll(target); err != nil { // git archive leaves an empty directory there
			return err
		}
		var creds Creds
		if sameHost(r.url, sub.URL) {
			creds = r.creds
		}
		if err := s.assemble(ctx, s.Repo(sub.URL, creds), sub.Commit, target, depth+1, budget); err != nil {
			return fmt.Errorf("submodule %q: %w", sub.Path, err)
		}
	}
	return nil
}

// joinInside joins a relative path under dir, refusing one that leaves it
// or passes through a symbolic link.
func joinInside(dir, p string) (string, error) {
	clean := path.Clean("/" + p)[1:]
	if clean == "" || clean == "." || filepath.IsAbs(p) || strings.HasPrefix(path.Clean(p), "..") {
		return "", fmt.Errorf("path %q is outside the repository", p)
	}
	cur := dir
	for _, part := range strings.Split(clean, "/") {
		cur = filepath.Join(cur, part)
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("path %q passes through a symbolic link", p)
		}
	}
	return cur, nil
}

// sameHost reports whether two repository URLs are on the same host (and
// scheme), so credentials of one may go to the other.
func sameHost(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && ua.Host != "" && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}
