package settings

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// ErrUnknownSigner is a signature made by a key argocd-gpg-keys-cm does
// not hold.
var ErrUnknownSigner = errors.New("signed with key not in keyring")

// VerifyGPGSignature checks signature, an ASCII-armored detached OpenPGP
// signature, over payload against keys. It returns the long key ID of
// the key that signed: the primary key's, also when one of its subkeys
// signed. A signature by a key not among keys is ErrUnknownSigner, with
// the signer's key ID returned.
func VerifyGPGSignature(keys []GPGKey, payload []byte, signature string) (string, error) {
	var ring openpgp.EntityList
	for _, k := range keys {
		list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(k.KeyData))
		if err != nil {
			return "", fmt.Errorf("GPG key %s: %w", k.KeyID, err)
		}
		ring = append(ring, list...)
	}
	signer, err := openpgp.CheckArmoredDetachedSignature(ring, bytes.NewReader(payload), strings.NewReader(signature), nil)
	if errors.Is(err, pgperrors.ErrUnknownIssuer) {
		return issuerOf(signature), ErrUnknownSigner
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%016X", signer.PrimaryKey.KeyId), nil
}

// issuerOf reads the key ID a signature names as its issuer ("" when it
// cannot be read).
func issuerOf(signature string) string {
	block, err := armor.Decode(strings.NewReader(signature))
	if err != nil {
		return ""
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return ""
	}
	if sig, ok := p.(*packet.Signature); ok && sig.IssuerKeyId != nil {
		return fmt.Sprintf("%016X", *sig.IssuerKeyId)
	}
	return ""
}
