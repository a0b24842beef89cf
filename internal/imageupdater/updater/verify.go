package updater

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/verify"
)

// errVerification marks a new version refused for its signature.
var errVerification = errors.New("signature verification failed")

// maxKeySize bounds a cosign public key read from a Secret.
const maxKeySize = 64 << 10

// verifySignature checks that an image digest carries a cosign signature
// made with the key v names. Nothing is written back otherwise.
func (u *Updater) verifySignature(ctx context.Context, v *config.Verification, listing *image, digest string) error {
	var s corev1.Secret
	if err := u.opts.Client.Get(ctx, types.NamespacedName{Namespace: v.Namespace, Name: v.Secret}, &s); err != nil {
		return fmt.Errorf("%w: cosign key Secret %s/%s: %w", errVerification, v.Namespace, v.Secret, err)
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
