package config

import (
	"fmt"
	"net/url"
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
	Insecure  bool   `json:"insecure,omitempty"`
	// Limit is the most requests per second sent to the registry; 0 is
	// no limit.
	Limit       float64 `json:"limit,omitempty"`
	TagSortMode string  `json:"tagsortmode,omitempty"`
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
		if r.Limit < 0 {
			return nil, fmt.Errorf("registries.conf: registry %s: limit %v is negative", name, r.Limit)
		}
		if r.Default {
			defaults++
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

// Insecure reports whether registries.conf marks the registry on host
// (host:port) insecure: reached over plain HTTP.
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
