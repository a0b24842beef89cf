package settings

import (
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// ErrUnknownSigner is a signature made by a key argocd-gpg-keys-cm does
// not hold.
var ErrUnknownSigner = git.ErrUnknownSigner

// VerifyGPGSignature checks signature, an ASCII-armored detached OpenPGP
// signature, over payload against keys. It returns the long key ID of
// the key that signed: the primary key's, also when one of its subkeys
// signed. A signature by a key not among keys is ErrUnknownSigner, with
// the signer's key ID returned.
func VerifyGPGSignature(keys []GPGKey, payload []byte, signature string) (string, error) {
	ring, err := git.NewKeyring(Armored(keys))
	if err != nil {
		return "", err
	}
	return ring.Verify(payload, signature)
}

// Armored are the keys' ASCII-armored data.
func Armored(keys []GPGKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KeyData
	}
	return out
}
