package git

import (
	"bufio"
	"bytes"
	"strings"
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
