package verify_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/capstan-cd/capstan/internal/imageupdater/registry"
	"github.com/capstan-cd/capstan/internal/imageupdater/verify"
)

// A cosign signature counts when it verifies with the key and names the
// digest checked.
func ExampleKey_Digest() {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, _ := signature.LoadECDSASigner(priv, crypto.SHA256)
	pemKey, _ := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	sign := func(digest string) registry.Signature {
		ref, _ := name.NewDigest("ghcr.io/org/web@" + digest)
		body, _ := json.Marshal(payload.Cosign{Image: ref})
		sig, _ := signer.SignMessage(bytes.NewReader(body))
		return registry.Signature{Payload: body, Sig: sig}
	}
	const d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

	key, _ := verify.ParseKey(pemKey)
	fmt.Println(key.Digest(d1, []registry.Signature{sign(d1)}))
	err := key.Digest(d2, []registry.Signature{sign(d1)})
	fmt.Println(errors.Is(err, verify.ErrUnsigned))
	fmt.Println(key.Digest(d2, nil))
	// Output:
	// <nil>
	// true
	// no signature verifies with the key: the registry holds no cosign signature for sha256:2222222222222222222222222222222222222222222222222222222222222222
}
