package helm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// DefaultValuesFileSchemes are the URL schemes value files may be fetched
// over when argocd-cm's helm.valuesFileSchemes is not set, as in Argo CD.
var DefaultValuesFileSchemes = []string{"https", "http"}

// maxRemoteValuesBytes bounds a value file fetched from a URL.
const maxRemoteValuesBytes = 8 << 20

// remoteValuesTimeout bounds fetching one value file.
const remoteValuesTimeout = 30 * time.Second

// remoteValueFile reports whether ref is a URL, and if so fetches it (its
// scheme must be one of schemes) into dir and returns the file's path.
func remoteValueFile(ctx context.Context, ref string, schemes []string, dir string, n int) (string, bool, error) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false, nil // a path
	}
	if schemes == nil {
		schemes = DefaultValuesFileSchemes
	}
	if !slices.Contains(schemes, u.Scheme) {
		return "", true, fmt.Errorf("the URL scheme '%s' is not allowed", u.Scheme)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", true, fmt.Errorf("the URL scheme '%s' is allowed but Capstan fetches value files over http and https only", u.Scheme)
	}
	ctx, cancel := context.WithTimeout(ctx, remoteValuesTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", true, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", true, fmt.Errorf("fetching %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", true, fmt.Errorf("fetching %s: %s", u.Redacted(), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRemoteValuesBytes+1))
	if err != nil {
		return "", true, fmt.Errorf("fetching %s: %w", u.Redacted(), err)
	}
	if len(data) > maxRemoteValuesBytes {
		return "", true, fmt.Errorf("%s is larger than %d bytes", u.Redacted(), maxRemoteValuesBytes)
	}
	path := filepath.Join(dir, "remote-values-"+strconv.Itoa(n)+".yaml")
	return path, true, os.WriteFile(path, data, 0o600)
}
