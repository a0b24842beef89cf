package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Registry is one entry of registries.conf in argocd-image-updater-config.
type Registry struct {
	Name string `json:"name"`
	// APIURL is where the registry's API answers, such as
	// https://registry-1.docker.io.
	APIURL string `json:"api_url"`
	// Prefix is the host part of image names served by this registry.
	Prefix string `json:"prefix"`
	Ping   bool   `json:"ping,omitempty"`
	// Credentials is pullsecret:ns/name, secret:ns/name#field, env:VAR or
	// ext:/path/to/script.
	Credentials string `json:"credentials,omitempty"`
	// CredsExpire is how long credentials are reused before they are read
	// again; 0 keeps them until the updater restarts.
	CredsExpire time.Duration `json:"-"`
	RawExpire   string        `json:"credsexpire,omitempty"`
	// Default is the registry for image names without a registry host.
	Default bool `json:"default,omitempty"`
	// DefaultNS is the namespace of single-name images (library on
	// Docker Hub).
	DefaultNS string `json:"defaultns,omitempty"`
	// Insecure turns off the verification of the registry's TLS
	// certificate, and lets it be reached over plain HTTP.
	Insecure bool `json:"insecure,omitempty"`
	// CAFile is a PEM bundle of certificate authorities trusted for this
	// registry besides the system's. Default: TLSCertsDir/<API host>
	// when that file exists (Argo CD's argocd-tls-certs-cm mounted).
	CAFile string `json:"ca_file,omitempty"`
	// CAData is PEM certificate authorities trusted for this registry
	// besides the system's, written in registries.conf itself.
	CAData string `json:"ca_data,omitempty"`
	// tls is how the registry is reached over TLS: the system's pool with
	// CAFile's and CAData's, or no verification when Insecure; nil for the
	// defaults. Made once per parse, so a client can keep a transport per
	// configuration.
	tls *tls.Config
	// Limit is the most requests per second sent to the registry; 0 is
	// no limit.
	Limit float64 `json:"limit,omitempty"`
	// TagSortMode says the registry lists tags in the order they were
	// pushed: latest-first or latest-last. The newest-build strategy then
	// takes that order instead of reading each tag's build date. Default
	// none: the order means nothing.
	TagSortMode string `json:"tagsortmode,omitempty"`
}

// The tag sort modes of registries.conf.
const (
	TagSortNone        = "none"
	TagSortLatestFirst = "latest-first"
	TagSortLatestLast  = "latest-last"
)

// TimeSorted reports whether the registry lists tags in push order.
func (r Registry) TimeSorted() bool {
	return r.TagSortMode == TagSortLatestFirst || r.TagSortMode == TagSortLatestLast
}

// ParseRegistries reads registries.conf. Errors name the entry.
func ParseRegistries(text string) ([]Registry, error) {
	var conf struct {
		Registries []Registry `json:"registries"`
	}
	if err := yaml.UnmarshalStrict([]byte(text), &conf); err != nil {
		return nil, fmt.Errorf("registries.conf: %w", err)
	}
	defaults := 0
	for i := range conf.Registries {
		r := &conf.Registries[i]
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		if r.Prefix == "" {
			return nil, fmt.Errorf("registries.conf: registry %s has no prefix", name)
		}
		if r.RawExpire != "" {
			d, err := time.ParseDuration(r.RawExpire)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("registries.conf: registry %s: credsexpire %q is not a duration", name, r.RawExpire)
			}
			r.CredsExpire = d
		}
		if r.Credentials != "" && !hasAnyPrefix(r.Credentials, "pullsecret:", "secret:", "env:", "ext:") {
			return nil, fmt.Errorf("registries.conf: registry %s: credentials %q: want pullsecret:ns/name, secret:ns/name#field, env:VAR or ext:/path", name, r.Credentials)
		}
		switch r.TagSortMode {
		case "", TagSortNone, TagSortLatestFirst, TagSortLatestLast:
		default:
			return nil, fmt.Errorf("registries.conf: registry %s: tagsortmode %q: want none, latest-first or latest-last", name, r.TagSortMode)
		}
		if r.Limit < 0 {
			return nil, fmt.Errorf("registries.conf: registry %s: limit %v is negative", name, r.Limit)
		}
		if r.Default {
			defaults++
		}
		if err := r.loadRoots(); err != nil {
			return nil, fmt.Errorf("registries.conf: registry %s: %w", name, err)
		}
	}
	if defaults > 1 {
		return nil, fmt.Errorf("registries.conf: %d registries are marked default; at most one may be", defaults)
	}
	return conf.Registries, nil
}

// dockerHub is the registry of image names without a registry host,
// unless registries.conf names another default.
var dockerHub = Registry{Name: "Docker Hub", APIURL: "https://registry-1.docker.io", Prefix: "docker.io", DefaultNS: "library"}

// RegistryFor returns the registry serving an image name (the longest
// matching prefix; the default one, or Docker Hub, for names without a
// registry host) and the name written out in full, such as
// docker.io/library/nginx.
func RegistryFor(registries []Registry, image string) (Registry, string) {
	first, rest, hasSlash := strings.Cut(image, "/")
	hasHost := hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost")
	if hasHost {
		best := -1
		for i, r := range registries {
			if (image == r.Prefix || strings.HasPrefix(image, r.Prefix+"/")) && (best < 0 || len(r.Prefix) > len(registries[best].Prefix)) {
				best = i
			}
		}
		if best >= 0 {
			return registries[best], image
		}
		return Registry{Name: first, APIURL: "https://" + first, Prefix: first}, first + "/" + rest
	}
	reg := dockerHub
	for _, r := range registries {
		if r.Default {
			reg = r
		}
	}
	if !strings.Contains(image, "/") && reg.DefaultNS != "" {
		image = reg.DefaultNS + "/" + image
	}
	return reg, reg.Prefix + "/" + image
}

// APIAddress is where an image's registry answers: its full name with the
// registry's prefix host replaced by the host of the registry's api_url
// (a registry known as docker.io is reached at registry-1.docker.io, a
// mirror's prefix at the mirror). Unchanged when api_url names no host or
// the name does not start with the prefix's host.
func APIAddress(reg Registry, full string) string {
	u, err := url.Parse(reg.APIURL)
	if err != nil || u.Host == "" || reg.Name == dockerHub.Name {
		return full // Docker Hub's names are resolved by the client
	}
	prefixHost := strings.SplitN(reg.Prefix, "/", 2)[0]
	rest, ok := strings.CutPrefix(full, prefixHost+"/")
	if !ok || prefixHost == u.Host {
		return full
	}
	return u.Host + "/" + rest
}

// byHost returns the registry whose prefix or API URL is on host.
func byHost(registries []Registry, host string) (Registry, bool) {
	for _, r := range registries {
		if strings.SplitN(r.Prefix, "/", 2)[0] == host {
			return r, true
		}
		if u, err := url.Parse(r.APIURL); err == nil && u.Host == host {
			return r, true
		}
	}
	return Registry{}, false
}

// TLSCertsDir is where Argo CD's install mounts argocd-tls-certs-cm, a
// file per host: a registry without ca_file trusts the file of its API
// host found there, as Argo CD Image Updater does.
var TLSCertsDir = "/app/config/tls"

// maxCAFile bounds a CA bundle read from a file.
const maxCAFile = 1 << 20

// loadRoots makes the registry's certificate pool from ca_file (or the
// mounted file of its host) and ca_data; an Insecure registry needs none.
func (r *Registry) loadRoots() error {
	if r.Insecure {
		r.tls = &tls.Config{InsecureSkipVerify: true} // what registries.conf asks for
		return nil
	}
	file := r.CAFile
	if file == "" {
		if u, err := url.Parse(r.APIURL); err == nil && u.Hostname() != "" {
			if found := filepath.Join(TLSCertsDir, u.Hostname()); fileExists(found) {
				file = found
			}
		}
	}
	if file == "" && r.CAData == "" {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if r.CAData != "" && !pool.AppendCertsFromPEM([]byte(r.CAData)) {
		return fmt.Errorf("ca_data holds no PEM certificate")
	}
	if file != "" {
		data, err := readBounded(file, maxCAFile)
		if err != nil {
			return fmt.Errorf("ca_file: %w", err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return fmt.Errorf("ca_file %s holds no PEM certificate", file)
		}
	}
	r.tls = &tls.Config{RootCAs: pool}
	return nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	} else if st.Size() > limit {
		return nil, fmt.Errorf("%s is over %d bytes", path, limit)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// TLS is the TLS configuration for the registry on host (host:port): nil
// for the system's defaults, else one that trusts the registry's own
// certificate authorities or, for an insecure registry, verifies nothing.
func TLS(registries []Registry, host string) *tls.Config {
	r, _ := byHost(registries, host)
	return r.tls
}

// Insecure reports whether registries.conf marks the registry on host
// (host:port) insecure: reached over plain HTTP when it has no TLS.
func Insecure(registries []Registry, host string) bool {
	r, ok := byHost(registries, host)
	return ok && r.Insecure
}

// Limit is the requests-per-second limit of the registry on host; 0 is
// none.
func Limit(registries []Registry, host string) float64 {
	r, _ := byHost(registries, host)
	return r.Limit
}
