package git

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Refs are a remote's refs: full ref name → commit SHA, with annotated tags
// peeled to the commit they point to, and "HEAD" the default branch's commit.
type Refs map[string]string

// parseLsRemote reads `git ls-remote --symref` output.
func parseLsRemote(out []byte) Refs {
	refs := Refs{}
	peeled := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ref: ") {
			continue // symref line: "ref: refs/heads/main\tHEAD"
		}
		sha, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if tag, isPeeled := strings.CutSuffix(name, "^{}"); isPeeled {
			peeled[tag] = sha
			continue
		}
		refs[name] = sha
	}
	for name, sha := range peeled {
		refs[name] = sha
	}
	return refs
}

// Resolve finds revision among the refs the way Argo CD does: empty and HEAD
// are the default branch, then an exact ref name, then a branch, then a tag.
func (r Refs) Resolve(revision string) (string, bool) {
	if revision == "" || revision == "HEAD" {
		sha, ok := r["HEAD"]
		return sha, ok
	}
	for _, name := range []string{revision, "refs/heads/" + revision, "refs/tags/" + revision} {
		if sha, ok := r[name]; ok {
			return sha, true
		}
	}
	return "", false
}

// ResolveConstraint picks, for a revision that is a semantic version
// constraint ("1.2.*", ">=1.0 <2.0") rather than a version, the tag with
// the highest version satisfying it, as Argo CD resolves such a
// targetRevision. With tagPrefix only tags starting with it count, and
// their versions are read after it ("component-b/1.0.1" is 1.0.1). ok is
// false when revision is no constraint or no tag satisfies it.
func (r Refs) ResolveConstraint(revision, tagPrefix string) (tag, sha string, ok bool) {
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(revision, "v")); err == nil {
		return "", "", false // a version names one tag, not a range
	}
	c, err := semver.NewConstraint(revision)
	if err != nil {
		return "", "", false
	}
	var best *semver.Version
	for _, name := range r.Tags() {
		rest, found := strings.CutPrefix(name, tagPrefix)
		if !found {
			continue
		}
		v, err := semver.NewVersion(rest)
		if err != nil || !c.Check(v) || (best != nil && !v.GreaterThan(best)) {
			continue
		}
		best, tag = v, name
	}
	if best == nil {
		return "", "", false
	}
	sha, ok = r.Resolve("refs/tags/" + tag)
	return tag, sha, ok
}
