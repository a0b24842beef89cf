// Package chartrepo fetches packaged Helm charts from HTTP chart
// repositories (index.yaml) and OCI registries, resolves version
// constraints, and unpacks each chart version once into a shared cache.
package chartrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/keylock"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// ErrChartNotFound means no chart version matches the name and constraint.
var ErrChartNotFound = errors.New("chart not found")

// Options configure a Client.
type Options struct {
	// Root holds unpacked charts. Required.
	Root string
	// IndexTTL is how long a repository's index (or an OCI tag list) is
	// reused. Default 3s, like Git refs.
	IndexTTL time.Duration
	// PlainHTTP talks to OCI registries over plain HTTP (tests, local registries).
	PlainHTTP bool
	// MaxExtractedBytes bounds a chart's files once unpacked, as Argo CD's
	// reposerver.helm.manifest.max.extracted.size. Default
	// DefaultMaxExtractedBytes; negative: no bound.
	MaxExtractedBytes int64
	// UserAgent is sent to chart repositories and registries, as Argo CD's
	// reposerver.helm.user.agent. Default Helm's ("Helm/<version>").
	UserAgent string
}

// DefaultMaxExtractedBytes is Argo CD's default bound on an unpacked
// chart (1G).
const DefaultMaxExtractedBytes int64 = 1 << 30

// Client fetches charts. It is safe for concurrent use.
type Client struct {
	opts Options

	mu      sync.Mutex
	indexes map[string]cachedVersions
	// locks make one fetch of a chart version at a time.
	locks keylock.Locks
}

type cachedVersions struct {
	index *repo.IndexFile // HTTP repositories
	tags  []string        // OCI registries
	at    time.Time
}

// NewClient returns a Client.
func NewClient(opts Options) *Client {
	if opts.IndexTTL == 0 {
		opts.IndexTTL = 3 * time.Second
	}
	return &Client{opts: opts, indexes: map[string]cachedVersions{}}
}

// IsOCI reports whether a chart repository URL names an OCI registry:
// oci://host/path, or host/path without a scheme as Argo CD stores them.
func IsOCI(repoURL string) bool {
	return strings.HasPrefix(repoURL, "oci://") || !strings.Contains(repoURL, "://")
}

// Resolve returns the newest version of chart that satisfies constraint
// (an exact version, a semver range, or empty/"*" for the newest).
func (c *Client) Resolve(ctx context.Context, repoURL, chart, constraint string, creds git.Creds, fresh bool) (string, error) {
	if err := Validate(repoURL, chart); err != nil {
		return "", err
	}
	if IsOCI(repoURL) {
		tags, err := c.ociTags(ctx, repoURL, chart, creds, fresh)
		if err != nil {
			return "", err
		}
		return pickVersion(tags, constraint, repoURL, chart)
	}
	index, err := c.index(ctx, repoURL, creds, fresh)
	if err != nil {
		return "", err
	}
	cv, err := index.Get(chart, constraint)
	if err != nil {
		return "", fmt.Errorf("%w: %s version %q in %s", ErrChartNotFound, chart, constraint, git.RedactURL(repoURL))
	}
	return cv.Version, nil
}

// Fetch returns the directory of the unpacked chart at an exact version,
// downloading it the first time.
func (c *Client) Fetch(ctx context.Context, repoURL, chart, version string, creds git.Creds) (string, error) {
	if err := Validate(repoURL, chart); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(git.NormalizeURL(repoURL) + "\x00" + chart + "\x00" + version))
	dir := filepath.Join(c.opts.Root, hex.EncodeToString(sum[:12]))
	chartDir := filepath.Join(dir, chart)
	if _, err := os.Stat(chartDir); err == nil {
		return chartDir, nil
	}
	defer c.locks.Lock(dir)()
	if _, err := os.Stat(chartDir); err == nil {
		return chartDir, nil
	}

	var archive []byte
	var err error
	if IsOCI(repoURL) {
		archive, err = c.ociPull(ctx, repoURL, chart, version, creds)
	} else {
		archive, err = c.httpPull(ctx, repoURL, chart, version, creds)
	}
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.opts.Root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(c.opts.Root, ".tmp-")
	if err != nil {
		return "", err
	}
	if err := c.unpack(tmp, archive); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("unpacking %s %s from %s: %w", chart, version, git.RedactURL(repoURL), err)
	}
	if _, err := os.Stat(filepath.Join(tmp, chart)); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("archive of %s %s from %s holds a chart of another name", chart, version, git.RedactURL(repoURL))
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	return chartDir, nil
}

func (c *Client) cached(key string, fresh bool) (cachedVersions, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.indexes[key]
	return v, ok && !fresh && time.Since(v.at) < c.opts.IndexTTL
}

func (c *Client) remember(key string, v cachedVersions) {
	v.at = time.Now()
	c.mu.Lock()
	c.indexes[key] = v
	c.mu.Unlock()
}

func (c *Client) index(ctx context.Context, repoURL string, creds git.Creds, fresh bool) (*repo.IndexFile, error) {
	key := "http|" + git.NormalizeURL(repoURL)
	if v, ok := c.cached(key, fresh); ok {
		return v.index, nil
	}
	data, err := c.httpGet(ctx, repoURL, strings.TrimSuffix(repoURL, "/")+"/index.yaml", creds)
	if err != nil {
		return nil, fmt.Errorf("fetching index of chart repository %s: %w", git.RedactURL(repoURL), err)
	}
	index := &repo.IndexFile{}
	if err := yaml.Unmarshal(data, index); err != nil {
		return nil, fmt.Errorf("reading index of chart repository %s: %w", git.RedactURL(repoURL), err)
	}
	if index.APIVersion == "" {
		return nil, fmt.Errorf("chart repository %s: index.yaml has no apiVersion", git.RedactURL(repoURL))
	}
	index.SortEntries()
	c.remember(key, cachedVersions{index: index})
	return index, nil
}

func (c *Client) httpPull(ctx context.Context, repoURL, chart, version string, creds git.Creds) ([]byte, error) {
	index, err := c.index(ctx, repoURL, creds, false)
	if err != nil {
		return nil, err
	}
	cv, err := index.Get(chart, version)
	if err != nil || len(cv.URLs) == 0 {
		return nil, fmt.Errorf("%w: %s %s in %s", ErrChartNotFound, chart, version, git.RedactURL(repoURL))
	}
	chartURL, err := resolveURL(repoURL, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	data, err := c.httpGet(ctx, repoURL, chartURL, creds)
	if err != nil {
		return nil, fmt.Errorf("downloading %s %s from %s: %w", chart, version, git.RedactURL(repoURL), err)
	}
	if cv.Digest != "" {
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != cv.Digest {
			return nil, fmt.Errorf("downloading %s %s from %s: digest mismatch", chart, version, git.RedactURL(repoURL))
		}
	}
	return data, nil
}

// resolveURL makes a chart URL from the index absolute against the repository.
func resolveURL(repoURL, ref string) (string, error) {
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	return base.ResolveReference(r).String(), nil
}

// httpGet reads u, a file of the chart repository repoURL, sending the
// repository's credentials only when u is on the repository's host (an
// index may point elsewhere) and reading at most MaxDownloadBytes.
func (c *Client) httpGet(ctx context.Context, repoURL, u string, creds git.Creds) ([]byte, error) {
	client, err := httpClient(repoURL, creds)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errors.New(redactAuth(err.Error()))
	}
	req.Header.Set("User-Agent", c.userAgent())
	if base, err := url.Parse(repoURL); err == nil && base.Host == req.URL.Host && (creds.Username != "" || creds.Password != "") {
		req.SetBasicAuth(creds.Username, creds.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, errors.New(redactAuth(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("failed to fetch %s : %s", redactAuth(u), resp.Status)
	}
	return readLimited(resp.Body, resp.ContentLength, MaxDownloadBytes, req.URL.Host)
}

// httpClient is an HTTP client with a repository's TLS options.
func httpClient(repoURL string, creds git.Creds) (*http.Client, error) {
	tlsConf, err := creds.TLSConfig()
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: %w", git.RedactURL(repoURL), err)
	}
	return &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConf},
	}, nil
}

// redactAuth keeps credentials embedded in URLs out of error text.
func redactAuth(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		if strings.Contains(f, "://") && strings.Contains(f, "@") {
			fields[i] = git.RedactURL(strings.Trim(f, `"'`))
		}
	}
	return strings.Join(fields, " ")
}

// pickVersion chooses the newest semver tag satisfying constraint.
func pickVersion(tags []string, constraint, repoURL, chart string) (string, error) {
	if constraint == "" {
		constraint = "*"
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		// Not a range: an exact tag.
		for _, t := range tags {
			if t == constraint || strings.ReplaceAll(t, "_", "+") == constraint {
				return constraint, nil
			}
		}
		return "", fmt.Errorf("%w: %s version %q in %s", ErrChartNotFound, chart, constraint, git.RedactURL(repoURL))
	}
	var best *semver.Version
	for _, t := range tags {
		v, err := semver.NewVersion(strings.ReplaceAll(t, "_", "+"))
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best = v
		}
	}
	if best == nil {
		return "", fmt.Errorf("%w: %s version %q in %s", ErrChartNotFound, chart, constraint, git.RedactURL(repoURL))
	}
	return best.Original(), nil
}

// ociRef is host/path/chart for a registry URL.
func ociRef(repoURL, chart string) string {
	return strings.TrimSuffix(strings.TrimPrefix(repoURL, "oci://"), "/") + "/" + chart
}

func (c *Client) registryClient(creds git.Creds) (*registry.Client, error) {
	opts := []registry.ClientOption{registry.ClientOptWriter(&bytes.Buffer{})}
	if c.opts.PlainHTTP || creds.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if creds.Username != "" || creds.Password != "" {
		opts = append(opts, registry.ClientOptBasicAuth(creds.Username, creds.Password))
	}
	if c.opts.UserAgent != "" {
		opts = append(opts, registry.ClientOptHTTPClient(&http.Client{Transport: &userAgent{name: c.opts.UserAgent, next: registry.NewTransport(false)}}))
	}
	return registry.NewClient(opts...)
}

func (c *Client) ociTags(_ context.Context, repoURL, chart string, creds git.Creds, fresh bool) ([]string, error) {
	key := "oci|" + ociRef(repoURL, chart)
	if v, ok := c.cached(key, fresh); ok {
		return v.tags, nil
	}
	rc, err := c.registryClient(creds)
	if err != nil {
		return nil, err
	}
	tags, err := rc.Tags(ociRef(repoURL, chart))
	if err != nil {
		return nil, fmt.Errorf("listing tags of %s: %w", ociRef(git.RedactURL(repoURL), chart), err)
	}
	c.remember(key, cachedVersions{tags: tags})
	return tags, nil
}

func (c *Client) ociPull(_ context.Context, repoURL, chart, version string, creds git.Creds) ([]byte, error) {
	rc, err := c.registryClient(creds)
	if err != nil {
		return nil, err
	}
	ref := ociRef(repoURL, chart) + ":" + strings.ReplaceAll(version, "+", "_")
	res, err := rc.Pull(ref, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("pulling %s: %w", ref, err)
	}
	return res.Chart.Data, nil
}
