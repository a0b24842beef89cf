package chartrepo

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// ErrInvalidChart means a chart source's repository URL or chart name is
// not one Capstan fetches.
var ErrInvalidChart = errors.New("invalid chart source")

// MaxDownloadBytes bounds one answer of a chart repository (an index or a
// chart archive), read before it is held in memory whole.
var MaxDownloadBytes int64 = 64 << 20

// chartName is a Helm chart's name: letters, digits, '.', '_' and '-',
// starting with a letter or digit, so it stays one path component.
var chartName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)

// Validate refuses a chart name that is not one path component and a
// repository URL that is not http(s), oci:// or an OCI host/path.
func Validate(repoURL, chart string) error {
	if !chartName.MatchString(chart) || strings.Contains(chart, "..") {
		return fmt.Errorf("%w: chart name %q: want letters, digits, '.', '_' and '-'", ErrInvalidChart, safetext.Truncate(chart, 200))
	}
	if repoURL == "" || strings.HasPrefix(repoURL, "-") || strings.IndexFunc(repoURL, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("%w: repository URL %q", ErrInvalidChart, git.RedactURL(safetext.Truncate(repoURL, 200)))
	}
	raw := repoURL
	if IsOCI(raw) {
		raw = "oci://" + strings.TrimPrefix(raw, "oci://")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || strings.HasPrefix(u.Host, "-") {
		return fmt.Errorf("%w: repository URL %q has no host", ErrInvalidChart, git.RedactURL(safetext.Truncate(repoURL, 200)))
	}
	switch u.Scheme {
	case "http", "https", "oci":
		return nil
	}
	return fmt.Errorf("%w: repository URL %q: want https://, http:// or oci://", ErrInvalidChart, git.RedactURL(safetext.Truncate(repoURL, 200)))
}

// readLimited reads a body of at most max bytes, refusing a longer one
// before holding more than max+1 bytes of it.
func readLimited(r io.Reader, length, max int64, host string) ([]byte, error) {
	if length > max {
		return nil, fmt.Errorf("the answer of %s is %d bytes, over the limit of %d", host, length, max)
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("the answer of %s is over the limit of %d bytes", host, max)
	}
	return data, nil
}
