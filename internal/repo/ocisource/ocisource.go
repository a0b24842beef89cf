// Package ocisource fetches the OCI sources of Applications, as Argo CD's
// repo server has since 3.1: a repoURL of oci://<registry>/<repository>
// without a chart names an OCI artifact whose one content layer (a tar or
// tar.gz of manifests, or a Helm chart) is unpacked into a directory and
// rendered like a Git checkout. A targetRevision is a tag, a digest or a
// semantic version constraint; the resolved revision is the artifact's
// digest, which never moves, so an unpacked artifact is kept by digest.
//
//	c := ocisource.New(ocisource.Options{Root: dir})
//	digest, err := c.Resolve(ctx, "oci://ghcr.io/org/manifests", "1.x", creds, false)
//	root, err := c.Fetch(ctx, "oci://ghcr.io/org/manifests", digest, creds)
package ocisource

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/keylock"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// The media types Argo CD unpacks by default
// (reposerver.oci.layer.media.types).
var DefaultLayerMediaTypes = []string{
	"application/vnd.oci.image.layer.v1.tar",
	"application/vnd.oci.image.layer.v1.tar+gzip",
	helmChartLayer,
}

const (
	helmChartLayer  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	helmChartConfig = "application/vnd.cncf.helm.config.v1+json"
	// DefaultMaxExtractedBytes is Argo CD's
	// reposerver.oci.manifest.max.extracted.size: 1G.
	DefaultMaxExtractedBytes = 1 << 30
	// maxManifestBytes bounds an artifact's manifest, as Argo CD's.
	maxManifestBytes = 4 << 20
	// maxLayers bounds an artifact's layers, as Argo CD's.
	maxLayers = 10
)

// Options configure a Client.
type Options struct {
	// Root is where artifacts are unpacked, one directory per digest.
	// Required.
	Root string
	// MaxExtractedBytes bounds the unpacked files of one artifact, as Argo
	// CD's reposerver.oci.manifest.max.extracted.size. Default 1 GiB; a
	// negative value sets no bound
	// (reposerver.disable.oci.manifest.max.extracted.size).
	MaxExtractedBytes int64
	// LayerMediaTypes are the content layers that may be unpacked, as Argo
	// CD's reposerver.oci.layer.media.types. Default
	// DefaultLayerMediaTypes.
	LayerMediaTypes []string
	// PlainHTTP reaches registries over HTTP (tests, registries inside the
	// cluster). Default false.
	PlainHTTP bool
	// TagsTTL is how long a repository's tag list is reused to resolve a
	// version constraint. Default 3 minutes.
	TagsTTL time.Duration
	// Observe, if set, hears of each request to a registry, when it ends
	// (Argo CD's argocd_oci_* metrics). Default: none.
	Observe func(Request)
}

// RequestKind is the kind of a request to a registry, named as Argo CD's
// request_type label names it.
type RequestKind string

// The requests a Client makes to registries.
const (
	RequestResolveRevision RequestKind = "resolve-revision"
	RequestGetTags         RequestKind = "get-tags"
	RequestExtract         RequestKind = "extract"
	RequestDigestMetadata  RequestKind = "digest-metadata"
	RequestTestRepo        RequestKind = "test-repo"
)

// Request is one request to a registry, as Options.Observe hears of it.
type Request struct {
	// URL is the oci:// repository URL, without credentials.
	URL  string
	Kind RequestKind
	// Revision is the tag, digest or constraint asked for; empty for tag
	// lists.
	Revision string
	Took     time.Duration
	Err      error
}

// observe tells Options.Observe of a request that began at start and
// ended now with err.
func (c *Client) observe(kind RequestKind, repoURL, revision string, start time.Time, err error) {
	if c.opts.Observe != nil {
		c.opts.Observe(Request{URL: git.RedactURL(repoURL), Kind: kind, Revision: revision, Took: time.Since(start), Err: err})
	}
}

// Client resolves and fetches OCI sources.
type Client struct {
	opts  Options
	locks keylock.Locks

	mu   sync.Mutex
	tags map[string]cachedTags
}

type cachedTags struct {
	tags []string
	at   time.Time
}

// New returns a Client with opts' defaults filled in.
func New(opts Options) *Client {
	if opts.MaxExtractedBytes == 0 {
		opts.MaxExtractedBytes = DefaultMaxExtractedBytes
	}
	if len(opts.LayerMediaTypes) == 0 {
		opts.LayerMediaTypes = DefaultLayerMediaTypes
	}
	if opts.TagsTTL == 0 {
		opts.TagsTTL = 3 * time.Minute
	}
	return &Client{opts: opts, tags: map[string]cachedTags{}}
}

// IsSource reports whether a source is an OCI source: an oci:// URL
// without a chart (one with a chart is a Helm chart in an OCI registry).
func IsSource(src v1alpha1.ApplicationSource) bool {
	return src.Chart == "" && strings.HasPrefix(src.RepoURL, "oci://")
}

// repository parses an oci:// URL into the registry's repository, reached
// over plain HTTP when the options or the repository's creds say so.
func (c *Client) repository(repoURL string, creds git.Creds) (name.Repository, error) {
	path := strings.TrimSuffix(strings.TrimPrefix(repoURL, "oci://"), "/")
	var opts []name.Option
	if c.opts.PlainHTTP || creds.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(path, append(opts, name.StrictValidation)...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("OCI repository %s: %w", git.RedactURL(repoURL), err)
	}
	return repo, nil
}

// remoteOptions reach the registry with the repository's credentials.
func remoteOptions(ctx context.Context, creds git.Creds) ([]remote.Option, error) {
	tlsConf, err := creds.TLSConfig()
	if err != nil {
		return nil, err
	}
	auth := authn.Anonymous
	if creds.Username != "" || creds.Password != "" {
		auth = &authn.Basic{Username: creds.Username, Password: creds.Password}
	}
	transport := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConf, ResponseHeaderTimeout: time.Minute}
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithTransport(transport)}, nil
}

// Resolve returns the digest revision names in the repository: a digest
// as it is, a tag's digest, or the digest of the highest tag a semantic
// version constraint allows. fresh lists the tags again.
func (c *Client) Resolve(ctx context.Context, repoURL, revision string, creds git.Creds, fresh bool) (_ string, err error) {
	defer func(start time.Time) { c.observe(RequestResolveRevision, repoURL, revision, start, err) }(time.Now())
	repo, err := c.repository(repoURL, creds)
	if err != nil {
		return "", err
	}
	if revision == "" || revision == "HEAD" {
		revision = "latest"
	}
	if strings.HasPrefix(revision, "sha256:") {
		if _, err := name.NewDigest(repo.Name()+"@"+revision, name.StrictValidation); err != nil {
			return "", fmt.Errorf("revision %q: %w", revision, err)
		}
		return revision, nil
	}
	opts, err := remoteOptions(ctx, creds)
	if err != nil {
		return "", err
	}
	digest, err := c.tagDigest(repo, revision, opts)
	if err == nil {
		return digest, nil
	}
	constraint, cErr := semver.NewConstraint(revision)
	if cErr != nil {
		return "", err
	}
	tags, tErr := c.listTags(repoURL, repo, opts, fresh)
	if tErr != nil {
		return "", tErr
	}
	tag, ok := highest(tags, constraint)
	if !ok {
		return "", fmt.Errorf("no tag of %s matches %q", repo.Name(), revision)
	}
	return c.tagDigest(repo, tag, opts)
}

// tagDigest asks the registry for a tag's digest.
func (c *Client) tagDigest(repo name.Repository, tag string, opts []remote.Option) (string, error) {
	ref, err := name.NewTag(repo.Name()+":"+tag, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", tag, err)
	}
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", ref.Name(), err)
	}
	return desc.Digest.String(), nil
}

// listTags lists a repository's tags, reusing a recent list.
func (c *Client) listTags(repoURL string, repo name.Repository, opts []remote.Option, fresh bool) ([]string, error) {
	c.mu.Lock()
	cached, ok := c.tags[repo.Name()]
	c.mu.Unlock()
	if ok && !fresh && time.Since(cached.at) < c.opts.TagsTTL {
		return cached.tags, nil
	}
	start := time.Now()
	tags, err := remote.List(repo, opts...)
	c.observe(RequestGetTags, repoURL, "", start, err)
	if err != nil {
		return nil, fmt.Errorf("listing the tags of %s: %w", repo.Name(), err)
	}
	c.mu.Lock()
	c.tags[repo.Name()] = cachedTags{tags: tags, at: time.Now()}
	c.mu.Unlock()
	return tags, nil
}

// highest is the highest version among tags the constraint allows.
func highest(tags []string, constraint *semver.Constraints) (string, bool) {
	var best *semver.Version
	var bestTag string
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !constraint.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, t
		}
	}
	return bestTag, best != nil
}

// Tags lists the repository's tags afresh: a connection test of an OCI
// repository, which names no artifact.
func (c *Client) Tags(ctx context.Context, repoURL string, creds git.Creds) (_ []string, err error) {
	defer func(start time.Time) { c.observe(RequestTestRepo, repoURL, "", start, err) }(time.Now())
	repo, err := c.repository(repoURL, creds)
	if err != nil {
		return nil, err
	}
	opts, err := remoteOptions(ctx, creds)
	if err != nil {
		return nil, err
	}
	return c.listTags(repoURL, repo, opts, true)
}

// Validate refuses an OCI source's URL that names no registry repository,
// and a revision longer than a tag or holding whitespace or control
// characters, before either reaches a registry.
func Validate(repoURL, revision string) error {
	if _, err := (&Client{}).repository(repoURL, git.Creds{}); err != nil {
		return err
	}
	if len(revision) > 256 || strings.IndexFunc(revision, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("revision %q of %s: want a tag, a digest or a version constraint", revision, git.RedactURL(repoURL))
	}
	return nil
}
