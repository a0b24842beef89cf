package settings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GPGKeysConfigMap holds the GnuPG public keys commits may be signed
// with: one entry per key, its long key ID mapped to the ASCII-armored key.
const GPGKeysConfigMap = "argocd-gpg-keys-cm"

// GPGKey is a GnuPG public key in the shape of Argo CD's GnuPGPublicKey.
type GPGKey struct {
	// KeyID is the long key ID: the last 16 hex digits of the fingerprint.
	KeyID       string `json:"keyID"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Owner is the key's primary identity.
	Owner string `json:"owner,omitempty"`
	// Trust is GnuPG's trust level; keys read from the ConfigMap are
	// "unknown" until a signature is verified against them.
	Trust string `json:"trust,omitempty"`
	// SubType is the algorithm and size as GnuPG names it: rsa4096, ed25519, …
	SubType string `json:"subType,omitempty"`
	// KeyData is the ASCII-armored key; lists leave it out.
	KeyData string `json:"keyData,omitempty"`
}

// Errors the GPG key functions refuse a request with; errors.Is tells
// them apart, the message is Argo CD's.
var (
	ErrInvalidGPGKey  = errors.New("invalid GPG key")
	ErrGPGKeyNotFound = errors.New("no such GPG key")
)

func gpgRefusal(format string, args ...any) error { return refuse(ErrInvalidGPGKey, format, args...) }

var (
	longKeyID   = regexp.MustCompile(`^[0-9A-Fa-f]{16}$`)
	fingerprint = regexp.MustCompile(`^[0-9A-Fa-f]{40}$`)
)

// GPGKeyID returns the long key ID a user's key ID or fingerprint names,
// in upper case, or "" when it is neither.
func GPGKeyID(s string) string {
	switch {
	case longKeyID.MatchString(s):
		return strings.ToUpper(s)
	case fingerprint.MatchString(s):
		return strings.ToUpper(s[24:])
	}
	return ""
}

// ParseGPGKeys reads the public keys in ASCII-armored data, each with its
// own armored copy as KeyData.
func ParseGPGKeys(data string) ([]GPGKey, error) {
	var entities openpgp.EntityList
	// Each armored block is read on its own: the reader stops after one.
	for i, block := range armoredBlocks(data) {
		list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(block))
		if err != nil {
			return nil, gpgRefusal("could not parse GPG key data (block %d): %v", i+1, err)
		}
		entities = append(entities, list...)
	}
	keys := make([]GPGKey, 0, len(entities))
	for _, e := range entities {
		var armored bytes.Buffer
		w, err := armor.Encode(&armored, openpgp.PublicKeyType, nil)
		if err != nil {
			return nil, err
		}
		if err := e.Serialize(w); err != nil {
			return nil, gpgRefusal("could not read GPG key %X: %v", e.PrimaryKey.KeyId, err)
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		k := GPGKey{KeyID: fmt.Sprintf("%016X", e.PrimaryKey.KeyId), Fingerprint: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint),
			Trust: "unknown", SubType: gpgSubType(e.PrimaryKey), KeyData: armored.String() + "\n"}
		if id := e.PrimaryIdentity(); id != nil {
			k.Owner = id.Name
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// armoredBlocks splits data at each armor header line; data without one
// is one block, for the reader to refuse.
func armoredBlocks(data string) []string {
	const begin = "-----BEGIN PGP"
	parts := strings.Split(data, begin)
	if len(parts) == 1 {
		return parts
	}
	blocks := make([]string, 0, len(parts)-1)
	for _, p := range parts[1:] {
		blocks = append(blocks, begin+p)
	}
	return blocks
}

// gpgSubType names a key's algorithm and size as GnuPG lists it.
func gpgSubType(pk *packet.PublicKey) string {
	bits, _ := pk.BitLength()
	switch pk.PubKeyAlgo {
	case packet.PubKeyAlgoRSA, packet.PubKeyAlgoRSASignOnly, packet.PubKeyAlgoRSAEncryptOnly:
		return fmt.Sprintf("rsa%d", bits)
	case packet.PubKeyAlgoDSA:
		return fmt.Sprintf("dsa%d", bits)
	case packet.PubKeyAlgoEd25519:
		return "ed25519"
	case packet.PubKeyAlgoEd448:
		return "ed448"
	}
	if curve, err := pk.Curve(); err == nil {
		switch curve {
		case packet.Curve25519:
			return "ed25519"
		case packet.CurveNistP256, packet.CurveNistP384, packet.CurveNistP521:
			return "nist" + strings.ToLower(string(curve))
		}
		return strings.ToLower(string(curve))
	}
	return "unknown"
}

// GPGKeys reads the keys of argocd-gpg-keys-cm. An entry that is not a
// key ID mapped to that one key is an error naming the entry.
func GPGKeys(ctx context.Context, r client.Reader, namespace string) ([]GPGKey, error) {
	cm, err := ReadConfigMap(ctx, r, namespace, GPGKeysConfigMap)
	if err != nil {
		return nil, err
	}
	keys := []GPGKey{}
	for _, id := range sortedKeys(cm.Data) {
		if GPGKeyID(id) != id {
			return nil, fmt.Errorf("ConfigMap/%s/%s: found entry with key '%s', but this is not a valid PGP key ID", namespace, GPGKeysConfigMap, id)
		}
		parsed, err := ParseGPGKeys(cm.Data[id])
		if err != nil || len(parsed) != 1 {
			return nil, fmt.Errorf("ConfigMap/%s/%s: could not parse GPG key for entry '%s' (%d keys): %v", namespace, GPGKeysConfigMap, id, len(parsed), err)
		}
		if parsed[0].KeyID != id {
			return nil, fmt.Errorf("ConfigMap/%s/%s: key parsed for entry with key ID '%s' had different key ID '%s'", namespace, GPGKeysConfigMap, id, parsed[0].KeyID)
		}
		keys = append(keys, parsed[0])
	}
	return keys, nil
}

// AddGPGKeys stores the keys in armored data in argocd-gpg-keys-cm,
// creating it when missing. Keys already there are skipped and their IDs
// returned apart.
func AddGPGKeys(ctx context.Context, c client.Client, namespace, data string) (added []GPGKey, skipped []string, err error) {
	if strings.TrimSpace(data) == "" {
		return nil, nil, gpgRefusal("submitted key data is empty")
	}
	keys, err := ParseGPGKeys(data)
	if err != nil {
		return nil, nil, err
	}
	if len(keys) == 0 {
		return nil, nil, gpgRefusal("no GPG public key in the submitted data")
	}
	err = updateConfigMap(ctx, c, namespace, GPGKeysConfigMap, func(stored map[string]string) error {
		added, skipped = nil, []string{}
		for _, k := range keys {
			if _, ok := stored[k.KeyID]; ok || slices.ContainsFunc(added, func(a GPGKey) bool { return a.KeyID == k.KeyID }) {
				skipped = append(skipped, k.KeyID)
				continue
			}
			stored[k.KeyID] = k.KeyData
			added = append(added, k)
		}
		return nil
	})
	return added, skipped, err
}

// DeleteGPGKey removes the key with a key ID (or fingerprint) from
// argocd-gpg-keys-cm.
func DeleteGPGKey(ctx context.Context, c client.Client, namespace, keyID string) error {
	id := GPGKeyID(keyID)
	if id == "" {
		return gpgRefusal("KeyID is malformed or empty")
	}
	return updateConfigMap(ctx, c, namespace, GPGKeysConfigMap, func(stored map[string]string) error {
		if _, ok := stored[id]; !ok {
			return refuse(ErrGPGKeyNotFound, "no such key configured: %s", id)
		}
		delete(stored, id)
		return nil
	})
}
