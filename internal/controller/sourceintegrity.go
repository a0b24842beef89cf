package controller

import (
	"bytes"
	"strings"

	"github.com/gobwas/glob"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// The GPG modes of a source integrity policy, as Argo CD names them.
const (
	gpgModeNone   = "none"
	gpgModeHead   = "head"
	gpgModeStrict = "strict"
)

// integrityPolicy returns the project's sourceIntegrity policy for a Git
// repository, nil when none applies. A policy applies when one of its repo
// globs matches the URL and none of its "!"-negated ones does; two
// policies applying is an error (verification must not silently lapse).
func integrityPolicy(proj *v1alpha1.AppProject, repoURL string) (*v1alpha1.SourceIntegrityGitPolicy, error) {
	if proj == nil || proj.Spec.SourceIntegrity == nil || proj.Spec.SourceIntegrity.Git == nil {
		return nil, nil
	}
	var found []*v1alpha1.SourceIntegrityGitPolicy
	for i, p := range proj.Spec.SourceIntegrity.Git.Policies {
		if policyMatches(p, repoURL) {
			found = append(found, &proj.Spec.SourceIntegrity.Git.Policies[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	return nil, message("multiple (%d) git source integrity policies found for repo URL: %s", len(found), repoURL)
}

func policyMatches(p v1alpha1.SourceIntegrityGitPolicy, repoURL string) bool {
	include := false
	for _, r := range p.Repos {
		pattern, negated := strings.CutPrefix(r.URL, "!")
		g, err := glob.Compile(pattern)
		if err != nil || !g.Match(repoURL) {
			continue
		}
		if negated {
			return false
		}
		include = true
	}
	return include
}

// verifiesGit reports whether a policy asks for a signature check.
func verifiesGit(p *v1alpha1.SourceIntegrityGitPolicy) bool {
	return p != nil && p.GPG != nil && p.GPG.Mode != gpgModeNone
}

// commitAuthor is a commit object's author as "Name <email>".
func commitAuthor(payload []byte) string {
	for _, line := range bytes.Split(payload, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("author ")); ok {
			if i := bytes.LastIndexByte(rest, '>'); i >= 0 {
				return string(rest[:i+1])
			}
			return string(rest)
		}
		if len(line) == 0 {
			break // the headers end
		}
	}
	return ""
}

// integrityProblem words a failed GIT/GPG check as Argo CD does.
func integrityProblem(revision, author, result, keyID string) error {
	return message("GIT/GPG: Failed verifying revision %s by '%s': %s (key_id=%s)", revision, author, result, keyID)
}
