package settings

import (
	"errors"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gpgkey"
)

func TestVerifyGPGSignature(t *testing.T) {
	known, other := gpgkey.New(t, "known"), gpgkey.New(t, "other")
	keys, err := ParseGPGKeys(known.Armored())
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@example.com> 1 +0000\n\nmessage\n")
	if id, err := VerifyGPGSignature(keys, payload, known.Sign(payload)); err != nil || id != known.ID() {
		t.Errorf("a good signature: %q, %v; want %s", id, err, known.ID())
	}
	if id, err := VerifyGPGSignature(keys, payload, other.Sign(payload)); !errors.Is(err, ErrUnknownSigner) || id != other.ID() {
		t.Errorf("a signature by a key not held: %q, %v; want %s and ErrUnknownSigner", id, err, other.ID())
	}
	if _, err := VerifyGPGSignature(keys, append(payload, "changed"...), known.Sign(payload)); err == nil {
		t.Error("a signature of other content verified")
	}
	if _, err := VerifyGPGSignature(keys, payload, "not a signature"); err == nil {
		t.Error("garbage verified")
	}
}
