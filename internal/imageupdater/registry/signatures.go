package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Signature is a cosign signature stored in a registry for an image
// digest: a simple signing payload with its signature, or a sigstore
// bundle's DSSE envelope (which holds both).
type Signature struct {
	// Payload is the signed document; Sig its raw signature.
	Payload, Sig []byte
	// Envelope is a bundle's DSSE envelope (JSON); Payload and Sig are
	// then empty.
	Envelope []byte
}

// The media types and annotation cosign stores signatures with.
const (
	// SimpleSigningMediaType is a layer holding a simple signing payload.
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// SignatureAnnotation holds the payload's signature, base64.
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// cosignArtifactType is a signature manifest found as a referrer.
	cosignArtifactType = "application/vnd.dev.cosign.artifact.sig.v1+json"
	// bundleArtifactType is a sigstore bundle found as a referrer.
	bundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
)

// Bounds on what signature lookup reads, so a hostile registry cannot
// make the updater hold much.
const (
	maxSignatures    = 32
	maxSignatureBlob = 1 << 20
)

// SignatureTag is where cosign stores an image digest's signatures on
// registries without the referrers API: sha256-<hex>.sig.
func SignatureTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1) + ".sig"
}

// Signatures returns the cosign signatures of an image digest: those its
// referrers list (OCI 1.1) and those of its .sig tag. None found is not
// an error.
func (c *Client) Signatures(ctx context.Context, image, digest string, creds Credentials) ([]Signature, error) {
	repo, err := c.repository(image)
	if err != nil {
		return nil, err
	}
	opts := c.remoteOptions(ctx, creds)
	d, err := v1.NewHash(digest)
	if err != nil {
		return nil, fmt.Errorf("digest %q: %w", digest, err)
	}
	var out []Signature
	if idx, err := remote.Referrers(repo.Digest(digest), opts...); err == nil {
		manifest, err := idx.IndexManifest()
		if err != nil {
			return nil, wrap(err, "reading the referrers of "+repo.Name()+"@"+digest)
		}
		for _, ref := range manifest.Manifests {
			if len(out) >= maxSignatures {
				break
			}
			switch ref.ArtifactType {
			case cosignArtifactType:
				sigs, err := c.signatureManifest(repo.Digest(ref.Digest.String()), opts)
				if err != nil {
					return nil, err
				}
				out = append(out, sigs...)
			case bundleArtifactType:
				env, err := c.bundleEnvelope(repo.Digest(ref.Digest.String()), opts)
				if err != nil {
					return nil, err
				}
				out = append(out, Signature{Envelope: env})
			}
		}
	}
	sigs, err := c.signatureManifest(repo.Tag(SignatureTag(d.String())), opts)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	out = append(out, sigs...)
	if len(out) > maxSignatures {
		out = out[:maxSignatures]
	}
	return out, nil
}

// signatureManifest reads a cosign signature image: each simple signing
// layer is a payload, its annotation the signature.
func (c *Client) signatureManifest(ref name.Reference, opts []remote.Option) ([]Signature, error) {
	img, err := c.image(ref, opts)
	if err != nil {
		return nil, err
	}
	manifest, err := img.Manifest()
	if err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	var out []Signature
	for _, l := range manifest.Layers {
		b64, ok := l.Annotations[SignatureAnnotation]
		if !ok || l.MediaType != SimpleSigningMediaType || len(out) >= maxSignatures {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue // not a signature; another may be
		}
		payload, err := c.blob(img, l, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, Signature{Payload: payload, Sig: sig})
	}
	return out, nil
}

// bundleEnvelope reads a sigstore bundle referrer's DSSE envelope.
func (c *Client) bundleEnvelope(ref name.Reference, opts []remote.Option) ([]byte, error) {
	img, err := c.image(ref, opts)
	if err != nil {
		return nil, err
	}
	manifest, err := img.Manifest()
	if err != nil || len(manifest.Layers) == 0 {
		return nil, fmt.Errorf("reading the bundle %s: %w", ref, cmpErr(err, errors.New("no layer")))
	}
	data, err := c.blob(img, manifest.Layers[0], ref)
	if err != nil {
		return nil, err
	}
	var bundle struct {
		Envelope json.RawMessage `json:"dsseEnvelope"`
	}
	if err := json.Unmarshal(data, &bundle); err != nil || len(bundle.Envelope) == 0 {
		return nil, fmt.Errorf("the bundle %s holds no DSSE envelope", ref)
	}
	return bundle.Envelope, nil
}

func (c *Client) image(ref name.Reference, opts []remote.Option) (v1.Image, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	if desc.MediaType != types.OCIManifestSchema1 && desc.MediaType != types.DockerManifestSchema2 {
		return nil, fmt.Errorf("%s is a %s, not a signature manifest", ref, desc.MediaType)
	}
	img, err := desc.Image()
	if err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	return img, nil
}

// blob reads a layer of at most maxSignatureBlob bytes.
func (c *Client) blob(img v1.Image, d v1.Descriptor, ref name.Reference) ([]byte, error) {
	if d.Size > maxSignatureBlob {
		return nil, fmt.Errorf("%s: a signature layer of %d bytes is more than %d", ref, d.Size, maxSignatureBlob)
	}
	l, err := img.LayerByDigest(d.Digest)
	if err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(rc, maxSignatureBlob+1)); err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	if buf.Len() > maxSignatureBlob {
		return nil, fmt.Errorf("%s: a signature layer is more than %d bytes", ref, maxSignatureBlob)
	}
	return buf.Bytes(), nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
