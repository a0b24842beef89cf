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
// sync commits signed with one of its signatureKeys.
func requiresSignatures(proj *v1alpha1.AppProject) bool {
	return proj != nil && len(proj.Spec.SignatureKeys) > 0
}

// verifySignatures checks that each Git source's commit is signed with a
// key of argocd-gpg-keys-cm the project allows, as Argo CD does; a Helm
// chart has no commit to check.
func (r *reconciler) verifySignatures(ctx context.Context, proj *v1alpha1.AppProject, resp *repo.Response) error {
	keys, err := settings.GPGKeys(ctx, r.client, r.opts.Namespace)
	if err != nil {
		return err
	}
	allowed := make([]string, 0, len(proj.Spec.SignatureKeys))
	for _, k := range proj.Spec.SignatureKeys {
		allowed = append(allowed, settings.GPGKeyID(k.KeyID))
	}
	for _, src := range resp.Sources {
		signed := src.Signed
		if signed == nil {
			continue
		}
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
	}
	return nil
}

// conditionMessage is an error whose text is a condition message worded
// as Argo CD words it, capital letter included.
type conditionMessage string

func (m conditionMessage) Error() string { return string(m) }

func message(format string, args ...any) error {
	return conditionMessage(fmt.Sprintf(format, args...))
}
