// Package registry reads what the image updater needs from container
// registries (Docker Registry HTTP API v2, through go-containerregistry):
// an image's tags, and a tag's digest and build date, from a multi-arch
// index's manifest for the wanted platforms. Tag metadata is cached, as
// tags other than those followed by digest are taken to be immutable, so
// a tag already seen costs no request.
package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"
)

// Credentials authenticate to a registry; empty means anonymous.
type Credentials struct {
	Username, Password string
}

// Metadata describes what a tag points at.
type Metadata struct {
	// Digest is the tag's manifest (or index) digest.
	Digest string
	// Created is the build date of the image, for an index the image of
	// the first wanted platform.
	Created time.Time
	// Platforms are those an index offers (os/arch[/variant]); empty for
	// a single image.
	Platforms []string
}

// Options configure a Client.
type Options struct {
	// Insecure reports whether a registry (host:port) may be reached over
	// plain HTTP. Default: none may.
	Insecure func(host string) bool
	// TLS returns the TLS configuration for a registry (host:port), nil
	// for the transport's own. Default: always nil. Read again on each
	// request; a transport is kept per host and configuration.
	TLS func(host string) *tls.Config
	// Limit returns the most requests per second a registry (host:port)
	// is sent; 0 is no limit. Read again on each request.
	Limit func(host string) float64
	// OnRequest, if set, is told of every request sent to a registry and
	// whether it failed (a transport error or a 5xx answer).
	OnRequest func(host string, failed bool)
	// PageSize asks for tag lists in pages of this many tags (0: as the
	// registry pages them); every page is read.
	PageSize int
	// CacheSize bounds the cached tag metadata. Default 10,000.
	CacheSize int
	// Transport is the HTTP transport. Default http.DefaultTransport. A
	// registry with a TLS configuration of its own gets a copy of it (of
	// http.DefaultTransport when Transport is not an *http.Transport).
	Transport http.RoundTripper
}

// Client reads registries.
type Client struct {
	opts      Options
	cache     *lru.Cache[string, *Metadata]
	transport http.RoundTripper
	// flight makes concurrent reads of one tag's metadata one request.
	flight singleflight.Group
}

// New returns a Client.
func New(opts Options) *Client {
	if opts.CacheSize == 0 {
		opts.CacheSize = 10000
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	if opts.Insecure == nil {
		opts.Insecure = func(string) bool { return false }
	}
	c, _ := lru.New[string, *Metadata](opts.CacheSize)
	next := opts.Transport
	if opts.TLS != nil {
		next = &perHostTLS{next: opts.Transport, tls: opts.TLS, copies: map[string]hostTransport{}}
	}
	return &Client{opts: opts, cache: c, transport: &limited{next: next, limit: opts.Limit, observe: opts.OnRequest, limiters: map[string]*rate.Limiter{}}}
}

// ErrUnauthorized is returned when the registry refuses the credentials.
var ErrUnauthorized = errors.New("the registry refused the credentials")

// ErrNoPlatform is returned for a multi-arch index offering none of the
// wanted platforms.
var ErrNoPlatform = errors.New("no wanted platform")

// ErrNotFound is returned for a tag the registry no longer has.
var ErrNotFound = errors.New("not found in the registry")

func (c *Client) repository(image string) (name.Repository, error) {
	var opts []name.Option
	if c.opts.Insecure(strings.SplitN(image, "/", 2)[0]) {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(image, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("image %q: %w", image, err)
	}
	return repo, nil
}

func (c *Client) remoteOptions(ctx context.Context, creds Credentials) []remote.Option {
	auth := authn.Anonymous
	if creds.Username != "" || creds.Password != "" {
		auth = &authn.Basic{Username: creds.Username, Password: creds.Password}
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithTransport(c.transport)}
}

// Tags lists every tag of an image (a Docker Hub name without a
// namespace is library/<name>), following the registry's pages, in the
// order the registry lists them.
func (c *Client) Tags(ctx context.Context, image string, creds Credentials) ([]string, error) {
	repo, err := c.repository(image)
	if err != nil {
		return nil, err
	}
	opts := c.remoteOptions(ctx, creds)
	if c.opts.PageSize > 0 {
		opts = append(opts, remote.WithPageSize(c.opts.PageSize))
	}
	tags, err := remote.List(repo, opts...)
	if err != nil {
		return nil, wrap(err, "listing the tags of "+repo.Name())
	}
	return tags, nil
}

// Metadata returns what a tag points at. For an index, platforms (os/arch
// [/variant]; empty: any) pick the image whose build date is read, and an
// index offering none of them is an error. fresh skips the cache (the
// digest strategy follows a mutable tag).
func (c *Client) Metadata(ctx context.Context, image, tag string, platforms []string, creds Credentials, fresh bool) (*Metadata, error) {
	key := image + ":" + tag + "|" + strings.Join(platforms, ",")
	if !fresh {
		if m, ok := c.cache.Get(key); ok {
			return m, nil
		}
	}
	v, err, _ := c.flight.Do(key, func() (any, error) { return c.metadata(ctx, image, tag, platforms, creds, key) })
	if err != nil {
		return nil, err
	}
	return v.(*Metadata), nil
}

func (c *Client) metadata(ctx context.Context, image, tag string, platforms []string, creds Credentials, key string) (*Metadata, error) {
	repo, err := c.repository(image)
	if err != nil {
		return nil, err
	}
	ref := repo.Tag(tag)
	opts := c.remoteOptions(ctx, creds)
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	m := &Metadata{Digest: desc.Digest.String()}
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, wrap(err, "reading the index "+ref.String())
		}
		manifest, err := idx.IndexManifest()
		if err != nil {
			return nil, wrap(err, "reading the index "+ref.String())
		}
		var chosen *v1.Descriptor
		for i, d := range manifest.Manifests {
			if d.Platform == nil {
				continue
			}
			p := d.Platform.String()
			m.Platforms = append(m.Platforms, p)
			if chosen == nil && wanted(d.Platform, platforms) {
				chosen = &manifest.Manifests[i]
			}
		}
		if chosen == nil {
			return nil, fmt.Errorf("%w: %s offers %s, none of %s", ErrNoPlatform, ref, strings.Join(m.Platforms, ", "), strings.Join(platforms, ", "))
		}
		if img, err = idx.Image(chosen.Digest); err != nil {
			return nil, wrap(err, "reading "+ref.String()+"@"+chosen.Digest.String())
		}
	} else if img, err = desc.Image(); err != nil {
		return nil, wrap(err, "reading "+ref.String())
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, wrap(err, "reading the configuration of "+ref.String())
	}
	m.Created = cfg.Created.Time
	c.cache.Add(key, m)
	return m, nil
}

// wanted reports whether a platform is one of those asked for (none
// asked: any).
func wanted(p *v1.Platform, platforms []string) bool {
	if len(platforms) == 0 {
		return true
	}
	for _, s := range platforms {
		want, err := v1.ParsePlatform(s)
		if err == nil && p.OS == want.OS && p.Architecture == want.Architecture && (want.Variant == "" || p.Variant == want.Variant) {
			return true
		}
	}
	return false
}

// wrap names what failed, and tells refused credentials apart.
func wrap(err error, what string) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("%s: %w", what, ErrUnauthorized)
	}
	if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}
