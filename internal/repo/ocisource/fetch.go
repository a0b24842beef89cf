package ocisource

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capstan-cd/capstan/internal/repo/archive"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// Fetch unpacks the artifact of repoURL at digest (a Resolve result) and
// returns the directory holding its files: for a Helm chart, the chart's
// own directory. An artifact is unpacked once; later calls return the
// same directory. Refused, naming why: more than ten layers, not exactly
// one content layer, a content layer of a media type not allowed, and
// files adding up to more than the extraction bound.
func (c *Client) Fetch(ctx context.Context, repoURL, digest string, creds git.Creds) (_ string, err error) {
	repo, err := c.repository(repoURL, creds)
	if err != nil {
		return "", err
	}
	ref, err := name.NewDigest(repo.Name()+"@"+digest, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", digest, err)
	}
	dir := filepath.Join(c.opts.Root, strings.ReplaceAll(repo.Name(), "/", "_"), strings.ReplaceAll(digest, ":", "-"))
	unlock := c.locks.Lock(dir)
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "files")); err == nil {
		return filepath.Join(dir, "files"), nil
	}
	defer func(start time.Time) { c.observe(RequestExtract, repoURL, digest, start, err) }(time.Now())
	opts, err := remoteOptions(ctx, creds)
	if err != nil {
		return "", err
	}
	manifest, err := c.manifest(ref, opts)
	if err != nil {
		return "", err
	}
	layer, chart, err := c.contentLayer(manifest)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref.Name(), err)
	}
	l, err := remote.Layer(ref.Context().Digest(layer.Digest.String()), opts...)
	if err != nil {
		return "", fmt.Errorf("fetching the content layer of %s: %w", ref.Name(), err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return "", fmt.Errorf("fetching the content layer of %s: %w", ref.Name(), err)
	}
	defer rc.Close()
	tmp := dir + ".partial"
	_ = os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	if err := c.unpack(rc, string(layer.MediaType), tmp); err != nil {
		return "", fmt.Errorf("unpacking %s: %w", ref.Name(), err)
	}
	files := tmp
	if chart {
		if files, err = chartDir(tmp); err != nil {
			return "", fmt.Errorf("unpacking %s: %w", ref.Name(), err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(files, filepath.Join(dir, "files")); err != nil {
		return "", err
	}
	return filepath.Join(dir, "files"), nil
}

// manifest reads an artifact's manifest, bounded.
func (c *Client) manifest(ref name.Digest, opts []remote.Option) (*v1.Manifest, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref.Name(), err)
	}
	if len(desc.Manifest) > maxManifestBytes {
		return nil, fmt.Errorf("%s: its manifest is %d bytes, over the limit of %d", ref.Name(), len(desc.Manifest), maxManifestBytes)
	}
	if desc.MediaType.IsIndex() {
		return nil, fmt.Errorf("%s is an image index, not one artifact", ref.Name())
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		return nil, fmt.Errorf("%s: reading its manifest: %w", ref.Name(), err)
	}
	return &m, nil
}

// contentLayer picks the artifact's one content layer, as Argo CD does: a
// Helm chart's chart layer, otherwise the one tar or tar.gz layer (other
// layers, provenance or attestations, are left alone).
func (c *Client) contentLayer(m *v1.Manifest) (v1.Descriptor, bool, error) {
	if len(m.Layers) > maxLayers {
		return v1.Descriptor{}, false, fmt.Errorf("expected no more than %d layers, got %d", maxLayers, len(m.Layers))
	}
	chart := string(m.Config.MediaType) == helmChartConfig
	var found []v1.Descriptor
	for _, l := range m.Layers {
		mt := string(l.MediaType)
		if (chart && mt == helmChartLayer) || (!chart && isTar(mt)) {
			if !slices.Contains(c.opts.LayerMediaTypes, mt) {
				return v1.Descriptor{}, false, fmt.Errorf("layer media type %s is not in the list of allowed media types (reposerver.oci.layer.media.types)", mt)
			}
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		return v1.Descriptor{}, false, fmt.Errorf("expected a single content layer, got %d", len(found))
	}
	return found[0], chart, nil
}

func isTar(mediaType string) bool {
	return strings.HasSuffix(mediaType, "tar") || isGzip(mediaType)
}

func isGzip(mediaType string) bool {
	return strings.HasSuffix(mediaType, "tar+gzip") || strings.HasSuffix(mediaType, "tar.gzip")
}

// unpack writes a tar or tar.gz layer into dir, bounded.
func (c *Client) unpack(r io.Reader, mediaType, dir string) error {
	if isGzip(mediaType) {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	}
	limit := c.opts.MaxExtractedBytes
	if limit < 0 {
		limit = 1 << 62
	}
	err := archive.Untar(r, dir, archive.Options{MaxBytes: limit})
	if err != nil && strings.Contains(err.Error(), "limit") {
		return fmt.Errorf("%w (reposerver.oci.manifest.max.extracted.size)", err)
	}
	return err
}

// chartDir is the one directory a Helm chart's layer holds.
func chartDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	if len(entries) != 1 || !entries[0].IsDir() {
		return "", fmt.Errorf("a Helm chart holds one directory, found %d entries", len(entries))
	}
	return filepath.Join(dir, entries[0].Name()), nil
}
