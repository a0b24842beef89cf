package chartrepo

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"net/http"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/capstan-cd/capstan/internal/repo/archive"
)

// unpack writes the chart archive (a .tgz) into dir, streaming it to disk
// within the extracted size bound: links, paths out of dir and entries
// named twice are refused.
func (c *Client) unpack(dir string, tgz []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("not a gzipped chart archive: %w", err)
	}
	defer zr.Close()
	if err := archive.Untar(zr, dir, archive.Options{MaxBytes: c.maxExtracted()}); err != nil {
		return fmt.Errorf("%w (reposerver.helm.manifest.max.extracted.size)", err)
	}
	return nil
}

func (c *Client) maxExtracted() int64 {
	switch {
	case c.opts.MaxExtractedBytes < 0:
		return math.MaxInt64
	case c.opts.MaxExtractedBytes == 0:
		return DefaultMaxExtractedBytes
	}
	return c.opts.MaxExtractedBytes
}

// userAgent is what chart repositories are told the client is.
func (c *Client) userAgent() string {
	if c.opts.UserAgent != "" {
		return c.opts.UserAgent
	}
	return "Helm/" + strings.TrimPrefix(chartutil.DefaultCapabilities.HelmVersion.Version, "v")
}

// userAgent sends every request with its name as the User-Agent.
type userAgent struct {
	name string
	next http.RoundTripper
}

func (u *userAgent) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", u.name)
	return u.next.RoundTrip(req)
}
