package git

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

// ErrUnknownSigner means a signature was made by a key not in the keyring.
var ErrUnknownSigner = errors.New("signed with key not in keyring")

// Keyring holds the OpenPGP public keys commit signatures are checked
// against (argocd-gpg-keys-cm's).
type Keyring struct {
	entities openpgp.EntityList
}

// NewKeyring reads ASCII-armored public keys.
func NewKeyring(armored []string) (*Keyring, error) {
	k := &Keyring{}
	for i, data := range armored {
		list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("GPG key %d: %w", i+1, err)
		}
		k.entities = append(k.entities, list...)
	}
	return k, nil
}

// Verify checks signature, an ASCII-armored detached OpenPGP signature,
// over payload. It returns the long key ID of the key that signed: the
// primary key's, also when one of its subkeys signed. A signature by a
// key not in the ring is ErrUnknownSigner, with the signer's key ID.
func (k *Keyring) Verify(payload []byte, signature string) (string, error) {
	signer, err := openpgp.CheckArmoredDetachedSignature(k.entities, bytes.NewReader(payload), strings.NewReader(signature), nil)
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
