package settings

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// publicKey returns a new key pair's armored public key and its key ID.
func publicKey(t *testing.T, name string) (string, string) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", strings.ToLower(name)+"@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	return b.String(), fmt.Sprintf("%016X", e.PrimaryKey.KeyId)
}

func TestGPGKeysRoundTrip(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	jane, janeID := publicKey(t, "Jane")
	joe, joeID := publicKey(t, "Joe")
	added, skipped, err := AddGPGKeys(ctx, c, ns, jane+"\n"+joe)
	if err != nil || len(added) != 2 || len(skipped) != 0 {
		t.Fatalf("add: %v, added %+v, skipped %v", err, added, skipped)
	}
	if _, skipped, err = AddGPGKeys(ctx, c, ns, jane); err != nil || len(skipped) != 1 || skipped[0] != janeID {
		t.Errorf("adding a stored key again: %v, skipped %v", err, skipped)
	}
	keys, err := GPGKeys(ctx, c, ns)
	if err != nil || len(keys) != 2 {
		t.Fatalf("list: %v, %+v", err, keys)
	}
	for _, k := range keys {
		if k.KeyID != janeID && k.KeyID != joeID || !strings.HasSuffix(k.Fingerprint, k.KeyID) || !strings.Contains(k.Owner, "@example.com") ||
			k.SubType == "" || k.SubType == "unknown" || !strings.HasPrefix(k.KeyData, "-----BEGIN PGP PUBLIC KEY BLOCK-----") {
			t.Errorf("listed key %+v", k)
		}
	}
	// A fingerprint names its key as well as the key ID.
	if err := DeleteGPGKey(ctx, c, ns, keys[0].Fingerprint); err != nil {
		t.Errorf("delete by fingerprint: %v", err)
	}
	if err := DeleteGPGKey(ctx, c, ns, keys[0].KeyID); !errors.Is(err, ErrGPGKeyNotFound) {
		t.Errorf("deleting a deleted key: %v", err)
	}
	for _, bad := range []string{"", "not a key", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n-----END PGP PUBLIC KEY BLOCK-----"} {
		if _, _, err := AddGPGKeys(ctx, c, ns, bad); !errors.Is(err, ErrInvalidGPGKey) {
			t.Errorf("adding %q: %v", bad, err)
		}
	}
	if err := DeleteGPGKey(ctx, c, ns, "--batch"); !errors.Is(err, ErrInvalidGPGKey) {
		t.Errorf("deleting a malformed key ID: %v", err)
	}
}

func TestGPGKeysNamesABadEntry(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	jane, _ := publicKey(t, "Jane")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: GPGKeysConfigMap, Namespace: ns}, Data: map[string]string{"0123456789ABCDEF": jane}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	if _, err := GPGKeys(context.Background(), c, ns); err == nil || !strings.Contains(err.Error(), "'0123456789ABCDEF'") {
		t.Errorf("a key stored under another key ID: %v", err)
	}
}
