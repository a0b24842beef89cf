package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// requiresSignatures reports whether the project's Applications may only
// sync signed commits of srcs: its sourceIntegrity names a GPG check for
// one of their repositories, or, without
// sourceIntegrity, it lists signatureKeys.
func requiresSignatures(proj *v1alpha1.AppProject, srcs []v1alpha1.ApplicationSource) bool {
	if proj == nil {
		return false
	}
	if proj.Spec.SourceIntegrity == nil {
		return len(proj.Spec.SignatureKeys) > 0
	}
	for _, src := range srcs {
		if src.Chart != "" {
			continue
		}
		if verifiesGit(integrityPolicy(proj, src.RepoURL)) {
			return true
		}
	}
	return false
}

// strictRepos are the repositories of srcs whose policy asks for strict
// verification (every commit of the history, to its seals).
func strictRepos(proj *v1alpha1.AppProject, srcs []v1alpha1.ApplicationSource) []string {
	var out []string
	for _, src := range srcs {
		if p := integrityPolicy(proj, src.RepoURL); src.Chart == "" && verifiesGit(p) && p.GPG.Mode == gpgModeStrict {
			out = append(out, src.RepoURL)
		}
	}
	return out
}

// historyCheck is the repo server's part of strict verification for
// srcs: the keys and the repositories; nil when no policy is strict.
func (r *reconciler) historyCheck(ctx context.Context, proj *v1alpha1.AppProject, srcs []v1alpha1.ApplicationSource) (*repo.HistoryCheck, error) {
	repos := strictRepos(proj, srcs)
	if len(repos) == 0 {
		return nil, nil
	}
	keys, err := settings.GPGKeys(ctx, r.client, r.opts.Namespace)
	if err != nil {
		return nil, err
	}
	return &repo.HistoryCheck{Keys: settings.Armored(keys), RepoURLs: repos}, nil
}

// verifySignatures checks each Git source's commit (resp.Sources, in the
// order of srcs) as the project asks, with Argo CD's messages: against its
// sourceIntegrity policy for the repository, or its signatureKeys. A Helm
// chart has no commit to check.
func (r *reconciler) verifySignatures(ctx context.Context, proj *v1alpha1.AppProject, srcs []v1alpha1.ApplicationSource, resp *repo.Response) error {
	keys, err := settings.GPGKeys(ctx, r.client, r.opts.Namespace)
	if err != nil {
		return err
	}
	for i, src := range resp.Sources {
		if src.Signed == nil || i >= len(srcs) {
			continue
		}
		if proj.Spec.SourceIntegrity != nil {
			err = checkIntegrity(keys, proj, srcs[i].RepoURL, src)
		} else {
			err = checkSignatureKeys(keys, proj, src)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkSignatureKeys checks a commit against the project's signatureKeys.
func checkSignatureKeys(keys []settings.GPGKey, proj *v1alpha1.AppProject, src repo.SourceResult) error {
	allowed := make([]string, 0, len(proj.Spec.SignatureKeys))
	for _, k := range proj.Spec.SignatureKeys {
		allowed = append(allowed, settings.GPGKeyID(k.KeyID))
	}
	signed := src.Signed
	if signed.Signature == "" {
		return message("Target revision %s in Git is not signed, but a signature is required", src.Revision)
	}
	keyID, err := settings.VerifyGPGSignature(keys, signed.Payload, signed.Signature)
	switch {
	case errors.Is(err, settings.ErrUnknownSigner):
		return message("Failed verifying revision %s: %v (key_id=%s)", src.Revision, err, keyID)
	case err != nil:
		return message("Failed verifying revision %s: %v", src.Revision, err)
	case !slices.Contains(allowed, keyID):
		return message("Revision %s is signed with key %s, which AppProject %s does not allow (signatureKeys: %s)",
			src.Revision, keyID, proj.Name, strings.Join(allowed, ", "))
	}
	return nil
}

// checkIntegrity checks a source against the project's sourceIntegrity
// policy for its repository: mode head verifies the commit itself, mode
// strict the commit and its history to its seal commits (which the repo
// server checked: src.History).
func checkIntegrity(keys []settings.GPGKey, proj *v1alpha1.AppProject, repoURL string, src repo.SourceResult) error {
	p := integrityPolicy(proj, repoURL)
	if !verifiesGit(p) {
		return nil
	}
	var checks []git.CommitCheck
	switch p.GPG.Mode {
	case gpgModeHead:
		checks = []git.CommitCheck{checkHead(keys, src)}
	case gpgModeStrict:
		if checks = src.History; len(checks) == 0 {
			return message("GIT/GPG: the history of revision %s was not verified", src.Revision)
		}
	default:
		return message("unknown GPG mode %q configured for GIT source integrity", p.GPG.Mode)
	}
	return integrityProblems(p.GPG.Keys, checks)
}

// checkHead checks the signature of the commit a source rendered.
func checkHead(keys []settings.GPGKey, src repo.SourceResult) git.CommitCheck {
	c := git.CommitCheck{Revision: src.Revision, Author: git.Author(src.Signed.Payload), Result: git.ResultUnsigned}
	if src.Signed.Signature == "" {
		return c
	}
	keyID, err := settings.VerifyGPGSignature(keys, src.Signed.Payload, src.Signed.Signature)
	c.KeyID = keyID
	switch {
	case errors.Is(err, settings.ErrUnknownSigner):
		c.Result = git.ResultUnknownKey
	case err != nil:
		c.Result = git.ResultBad
	default:
		c.Result = git.ResultSigned
	}
	return c
}

// maxIntegrityProblems is how many problems a failed check reports, the
// newest first, as Argo CD does.
const maxIntegrityProblems = 10

// integrityProblems words the failed commits of checks as Argo CD does,
// one line each: each unsigned commit, each key once.
func integrityProblems(allowed []string, checks []git.CommitCheck) error {
	var lines []string
	reported := map[string]bool{}
	for _, c := range checks {
		if c.KeyID != "" {
			if reported[c.KeyID] {
				continue
			}
			reported[c.KeyID] = true
		}
		switch {
		case c.Result != git.ResultSigned:
			lines = append(lines, fmt.Sprintf("GIT/GPG: Failed verifying revision %s by '%s': %s (key_id=%s)", c.Revision, c.Author, c.Result, c.KeyID))
		case !slices.ContainsFunc(allowed, func(k string) bool { return settings.GPGKeyID(k) == c.KeyID }):
			lines = append(lines, fmt.Sprintf("GIT/GPG: Failed verifying revision %s by '%s': signed with unallowed key (key_id=%s)", c.Revision, c.Author, c.KeyID))
		}
		if len(lines) == maxIntegrityProblems {
			break
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return message("%s", strings.Join(lines, "\n"))
}

// conditionMessage is an error whose text is a condition message worded
// as Argo CD words it, capital letter included.
type conditionMessage string

func (m conditionMessage) Error() string { return string(m) }

func message(format string, args ...any) error {
	return conditionMessage(fmt.Sprintf(format, args...))
}
