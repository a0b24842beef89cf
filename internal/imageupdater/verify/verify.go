// Package verify checks that a container image digest carries a cosign
// signature made with a given public key, as Argo CD Image Updater checks
// a new version before writing it back. Signatures come from the registry
// (cosign's .sig tag, its signature referrers, or sigstore bundles with a
// DSSE envelope); the cryptography is sigstore's. A signature counts only
// when it verifies with the key and names the digest checked, so a valid
// signature of another image does not pass.
package verify

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/capstan-cd/capstan/internal/imageupdater/registry"
)

// ErrUnsigned is returned when no signature verifies.
var ErrUnsigned = errors.New("no signature verifies with the key")

// Key is a public key signatures are checked with.
type Key struct {
	verifier signature.Verifier
}

// ParseKey reads a PEM public key (ECDSA, RSA or Ed25519, as cosign
// makes them).
func ParseKey(pemKey []byte) (*Key, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemKey)
	if err != nil {
		return nil, fmt.Errorf("not a PEM public key: %w", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("unusable public key: %w", err)
	}
	return &Key{verifier: v}, nil
}

// Digest checks that one of sigs is a signature of digest (sha256:...)
// made with the key. The error says why none is when none is.
func (k *Key) Digest(digest string, sigs []registry.Signature) error {
	if len(sigs) == 0 {
		return fmt.Errorf("%w: the registry holds no cosign signature for %s", ErrUnsigned, digest)
	}
	var reasons []string
	for _, s := range sigs {
		err := k.one(digest, s)
		if err == nil {
			return nil
		}
		reasons = append(reasons, err.Error())
	}
	return fmt.Errorf("%w: %d signature(s) of %s checked: %s", ErrUnsigned, len(sigs), digest, strings.Join(reasons, "; "))
}

func (k *Key) one(digest string, s registry.Signature) error {
	if len(s.Envelope) > 0 {
		return k.envelope(digest, s.Envelope)
	}
	if err := k.verifier.VerifySignature(bytes.NewReader(s.Sig), bytes.NewReader(s.Payload)); err != nil {
		return errors.New("signed with another key or altered")
	}
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(s.Payload, &p); err != nil {
		return errors.New("the signed payload is not cosign's")
	}
	if got := p.Critical.Image.DockerManifestDigest; got != digest {
		return fmt.Errorf("signs %s, another digest", got)
	}
	return nil
}

// envelope checks a DSSE envelope whose payload is an in-toto statement
// naming the digest among its subjects.
func (k *Key) envelope(digest string, env []byte) error {
	if err := dsse.WrapVerifier(k.verifier).VerifySignature(bytes.NewReader(env), nil); err != nil {
		return errors.New("the bundle is signed with another key or altered")
	}
	var e struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		return errors.New("the bundle's envelope does not parse")
	}
	body, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		return errors.New("the bundle's payload is not base64")
	}
	var statement struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.Unmarshal(body, &statement); err != nil {
		return errors.New("the bundle's payload is not an in-toto statement")
	}
	algo, hex, _ := strings.Cut(digest, ":")
	for _, sub := range statement.Subject {
		if sub.Digest[algo] == hex {
			return nil
		}
	}
	return fmt.Errorf("the bundle does not name %s", digest)
}
