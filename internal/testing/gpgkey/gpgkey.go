// Package gpgkey makes OpenPGP keys for tests: a public key to give
// Capstan (argocd-gpg-keys-cm) and detached signatures of commits.
package gpgkey

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// Key is a new OpenPGP key pair.
type Key struct {
	t      testing.TB
	entity *openpgp.Entity
}

// New makes a key for name.
func New(t testing.TB, name string) *Key {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", name+"@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{t: t, entity: e}
}

// ID is the key's long key ID, as argocd-gpg-keys-cm and signatureKeys
// name it.
func (k *Key) ID() string { return fmt.Sprintf("%016X", k.entity.PrimaryKey.KeyId) }

// Armored is the ASCII-armored public key.
func (k *Key) Armored() string {
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err == nil {
		err = k.entity.Serialize(w)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return buf.String() + "\n"
}

// Sign returns an ASCII-armored detached signature of payload.
func (k *Key) Sign(payload []byte) string {
	var buf bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&buf, k.entity, bytes.NewReader(payload), nil); err != nil {
		k.t.Fatal(err)
	}
	return buf.String()
}

// ArmoredPrivate is the ASCII-armored private key, protected by
// passphrase when one is given, as a file GnuPG imports.
func (k *Key) ArmoredPrivate(passphrase string) string {
	e := k.entity
	if passphrase != "" {
		var copied bytes.Buffer
		if err := k.entity.SerializePrivate(&copied, nil); err != nil {
			k.t.Fatal(err)
		}
		list, err := openpgp.ReadKeyRing(&copied)
		if err != nil || len(list) != 1 {
			k.t.Fatalf("copying the key: %v", err)
		}
		e = list[0]
		if err := e.EncryptPrivateKeys([]byte(passphrase), nil); err != nil {
			k.t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PrivateKeyType, nil)
	if err == nil {
		err = e.SerializePrivateWithoutSigning(w, nil)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return buf.String() + "\n"
}
