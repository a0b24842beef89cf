package registryserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// SignCosign signs repo@digest as `cosign sign --key` does on a registry
// without the referrers API: a simple signing payload naming the digest,
// signed by signer, pushed as a layer of the sha256-<hex>.sig tag with the
// signature in its annotation.
func (r *Registry) SignCosign(t testing.TB, repo string, digest v1.Hash, signer signature.Signer) {
	t.Helper()
	ref, err := name.NewDigest(r.Host+"/"+repo+"@"+digest.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(payload.Cosign{Image: ref})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signer.SignMessage(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(body, "application/vnd.dev.cosign.simplesigning.v1+json"),
		Annotations: map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		t.Fatal(err)
	}
	tag := strings.Replace(digest.String(), ":", "-", 1) + ".sig"
	if err := remote.Write(r.Ref(t, repo+":"+tag), img, r.pushOptions()...); err != nil {
		t.Fatalf("pushing the signature of %s@%s: %v", repo, digest, err)
	}
}
