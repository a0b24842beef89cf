package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
)

// requiresSignatures reports whether the project's Applications may only
// sync signed commits of srcs: its sourceIntegrity names a GPG check for
// one of their repositories (or cannot decide), or, without
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
		if p, err := integrityPolicy(proj, src.RepoURL); err != nil || verifiesGit(p) {
			return true
		}
	}
	return false
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

// checkIntegrity checks a commit against the project's sourceIntegrity
// policy for its repository: mode head verifies the commit itself; mode
// strict (every commit of the history) is not supported, and fails closed.
func checkIntegrity(keys []settings.GPGKey, proj *v1alpha1.AppProject, repoURL string, src repo.SourceResult) error {
	p, err := integrityPolicy(proj, repoURL)
	if err != nil || !verifiesGit(p) {
		return err
	}
	switch p.GPG.Mode {
	case gpgModeHead:
	case gpgModeStrict:
		return message("GIT/GPG: source integrity mode %q (every commit of the history) is not supported by Capstan; use %q", gpgModeStrict, gpgModeHead)
	default:
		return message("unknown GPG mode %q configured for GIT source integrity", p.GPG.Mode)
	}
	author := commitAuthor(src.Signed.Payload)
	if src.Signed.Signature == "" {
		return integrityProblem(src.Revision, author, "unsigned", "")
	}
	keyID, err := settings.VerifyGPGSignature(keys, src.Signed.Payload, src.Signed.Signature)
	switch {
	case errors.Is(err, settings.ErrUnknownSigner):
		return integrityProblem(src.Revision, author, "signed with key not in keyring", keyID)
	case err != nil:
		return integrityProblem(src.Revision, author, "bad signature", keyID)
	}
	for _, k := range p.GPG.Keys {
		if settings.GPGKeyID(k) == keyID {
			return nil
		}
	}
	return message("GIT/GPG: Failed verifying revision %s by '%s': signed with unallowed key (key_id=%s)", src.Revision, author, keyID)
}

// conditionMessage is an error whose text is a condition message worded
// as Argo CD words it, capital letter included.
type conditionMessage string

func (m conditionMessage) Error() string { return string(m) }

func message(format string, args ...any) error {
	return conditionMessage(fmt.Sprintf(format, args...))
}
