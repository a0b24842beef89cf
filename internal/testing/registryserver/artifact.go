package registryserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"sort"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Artifact is an OCI artifact of manifests, as `oras push` or `argocd`'s
// docs make one: one layer holding files.
type Artifact struct {
	// Files are the layer's files, path → content.
	Files map[string]string
	// MediaType is the layer's. Default
	// application/vnd.oci.image.layer.v1.tar+gzip; one ending in "tar"
	// is an uncompressed tar.
	MediaType string
	// Annotations are the manifest's (org.opencontainers.image.*).
	Annotations map[string]string
}

// PushArtifact pushes a under every tag given and returns its digest.
func (r *Registry) PushArtifact(t testing.TB, repo string, a Artifact, tags ...string) v1.Hash {
	t.Helper()
	mediaType := a.MediaType
	if mediaType == "" {
		mediaType = "application/vnd.oci.image.layer.v1.tar+gzip"
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	paths := make([]string, 0, len(a.Files))
	for p := range a.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(a.Files[p])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(a.Files[p])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if mediaType[len(mediaType)-3:] != "tar" {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data = gz.Bytes()
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.oci.empty.v1+json")
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(data, types.MediaType(mediaType))})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Annotations) > 0 {
		img = mutate.Annotations(img, a.Annotations).(v1.Image)
	}
	return r.push(t, repo, img, tags)
}
