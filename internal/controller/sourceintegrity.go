package controller

import (
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
// repository, nil when none applies: the first, in order, with a repo
// glob matching the URL and none of its "!"-negated ones matching, as
// Argo CD selects it (more specific policies go first).
func integrityPolicy(proj *v1alpha1.AppProject, repoURL string) *v1alpha1.SourceIntegrityGitPolicy {
	if proj == nil || proj.Spec.SourceIntegrity == nil || proj.Spec.SourceIntegrity.Git == nil {
		return nil
	}
	for i, p := range proj.Spec.SourceIntegrity.Git.Policies {
		if policyMatches(p, repoURL) {
			return &proj.Spec.SourceIntegrity.Git.Policies[i]
		}
	}
	return nil
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
