package updater

import (
	"context"
	"errors"
	"fmt"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/verify"
)

// errVerification marks a new version refused for its signature.
var errVerification = errors.New("signature verification failed")

// maxKeySize bounds a cosign public key read from a Secret.
const maxKeySize = 64 << 10

// verifySignature checks that an image digest carries a cosign signature
// made with the key v names. Nothing is written back otherwise.
// The key's Secret is read as the Application's tenant scope allows.
func (u *Updater) verifySignature(ctx context.Context, app *v1alpha1.Application, v *config.Verification, listing *image, digest string) error {
	s, err := tenantScope(app, "cosign key", nil).Read(ctx, u.opts.Client, v.Namespace, v.Secret)
	if err != nil {
		return fmt.Errorf("%w: %w", errVerification, err)
	}
	data, ok := s.Data[v.Key]
	switch {
	case !ok:
		return fmt.Errorf("%w: cosign key Secret %s/%s has no key %q", errVerification, v.Namespace, v.Secret, v.Key)
	case len(data) > maxKeySize:
		return fmt.Errorf("%w: cosign key Secret %s/%s key %q is more than %d bytes", errVerification, v.Namespace, v.Secret, v.Key, maxKeySize)
	}
	key, err := verify.ParseKey(data)
	if err != nil {
		return fmt.Errorf("%w: cosign key Secret %s/%s key %q: %w", errVerification, v.Namespace, v.Secret, v.Key, err)
	}
	sigs, err := u.registry.Signatures(ctx, listing.addr, digest, listing.creds)
	if err != nil {
		return fmt.Errorf("%w: reading the signatures of %s@%s: %w", errVerification, listing.full, digest, err)
	}
	if err := key.Digest(digest, sigs); err != nil {
		return fmt.Errorf("%w: %s@%s: %w", errVerification, listing.full, digest, err)
	}
	return nil
}
