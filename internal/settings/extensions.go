package settings

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ProxyExtension is one proxy extension of argocd-cm: a backend the API
// server forwards a UI extension's requests to, under
// /extensions/<name>/, as Argo CD's extension.config describes it.
type ProxyExtension struct {
	// Name is the extension's path segment: letters, digits, - and _.
	Name    string       `json:"name"`
	Backend ProxyBackend `json:"backend"`
}

// ProxyBackend is where an extension's requests go, and how the API
// server connects there.
type ProxyBackend struct {
	// ConnectionTimeout bounds a dial to the backend. Default 2s.
	ConnectionTimeout metav1.Duration `json:"connectionTimeout"`
	// KeepAlive is the interval of keep-alive probes. Default 15s.
	KeepAlive metav1.Duration `json:"keepAlive"`
	// IdleConnectionTimeout closes an idle connection. Default 60s.
	IdleConnectionTimeout metav1.Duration `json:"idleConnectionTimeout"`
	// MaxIdleConnections bounds the idle connections kept. Default 30.
	MaxIdleConnections int `json:"maxIdleConnections"`
	// Services are the backend's addresses: one, or one per destination
	// cluster.
	Services []ProxyService `json:"services"`
}

// ProxyService is one address of a backend, for the Applications of one
// destination cluster when there are several.
type ProxyService struct {
	URL     string        `json:"url"`
	Cluster *ProxyCluster `json:"cluster,omitempty"`
	Headers []ProxyHeader `json:"headers,omitempty"`
}

// ProxyCluster names a destination cluster by name, server URL or both.
type ProxyCluster struct {
	Name   string `json:"name"`
	Server string `json:"server"`
}

// ProxyHeader is a header added to every request to a service; its value
// may be a $key reference to argocd-secret, resolved when read.
type ProxyHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Argo CD's defaults for the connections to an extension's backend.
var (
	DefaultExtensionConnectionTimeout     = metav1.Duration{Duration: 2e9}
	DefaultExtensionKeepAlive             = metav1.Duration{Duration: 15e9}
	DefaultExtensionIdleConnectionTimeout = metav1.Duration{Duration: 60e9}
)

// DefaultExtensionMaxIdleConnections is Argo CD's default.
const DefaultExtensionMaxIdleConnections = 30

const extensionConfigKey = "extension.config"

var extensionName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ProxyExtensions are the proxy extensions of extension.config (a list
// under "extensions") and of each extension.config.<name> key (one
// backend), with $key references in them resolved and Argo CD's defaults
// filled in, sorted by name. A configuration Argo CD would refuse is an
// error naming what is wrong; none is nil.
func (a *ArgoCD) ProxyExtensions(ctx context.Context, c client.Reader, namespace string) ([]ProxyExtension, error) {
	var out []ProxyExtension
	for _, k := range sortedKeys(a.Data) {
		if k != extensionConfigKey && !strings.HasPrefix(k, extensionConfigKey+".") {
			continue
		}
		var doc any
		if err := yaml.Unmarshal([]byte(a.Data[k]), &doc); err != nil {
			return nil, fmt.Errorf("argocd-cm %s: %w", k, err)
		}
		doc, err := resolveSecretRefs(ctx, c, namespace, doc)
		if err != nil {
			return nil, fmt.Errorf("argocd-cm %s: %w", k, err)
		}
		resolved, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		if k == extensionConfigKey {
			var list struct {
				Extensions []ProxyExtension `json:"extensions"`
			}
			if err := yaml.UnmarshalStrict(resolved, &list); err != nil {
				return nil, fmt.Errorf("argocd-cm %s: %w", k, err)
			}
			out = append(out, list.Extensions...)
			continue
		}
		ext := ProxyExtension{Name: strings.TrimPrefix(k, extensionConfigKey+".")}
		if err := yaml.UnmarshalStrict(resolved, &ext.Backend); err != nil {
			return nil, fmt.Errorf("argocd-cm %s: %w", k, err)
		}
		out = append(out, ext)
	}
	if err := validateExtensions(out); err != nil {
		return nil, fmt.Errorf("argocd-cm extension.config: %w", err)
	}
	for i := range out {
		b := &out[i].Backend
		fill(&b.ConnectionTimeout, DefaultExtensionConnectionTimeout)
		fill(&b.KeepAlive, DefaultExtensionKeepAlive)
		fill(&b.IdleConnectionTimeout, DefaultExtensionIdleConnectionTimeout)
		if b.MaxIdleConnections == 0 {
			b.MaxIdleConnections = DefaultExtensionMaxIdleConnections
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func fill(d *metav1.Duration, def metav1.Duration) {
	if d.Duration == 0 {
		*d = def
	}
}

// validateExtensions refuses what Argo CD refuses: a missing or unsafe
// name, a name twice, an extension without a service or a service
// without a URL, several services not each naming its cluster, a header
// without a name or value.
func validateExtensions(exts []ProxyExtension) error {
	seen := map[string]bool{}
	for _, ext := range exts {
		switch {
		case ext.Name == "":
			return errors.New("an extension has no name")
		case !extensionName.MatchString(ext.Name):
			return fmt.Errorf("extension name %q: only letters, digits, hyphens and underscores are allowed", ext.Name)
		case seen[ext.Name]:
			return fmt.Errorf("extension %q is configured twice", ext.Name)
		case len(ext.Backend.Services) == 0:
			return fmt.Errorf("extension %q has no backend service", ext.Name)
		}
		seen[ext.Name] = true
		for _, svc := range ext.Backend.Services {
			switch {
			case svc.URL == "":
				return fmt.Errorf("extension %q: a service has no url", ext.Name)
			case len(ext.Backend.Services) > 1 && svc.Cluster == nil:
				return fmt.Errorf("extension %q: each of several services must name its cluster", ext.Name)
			case svc.Cluster != nil && svc.Cluster.Name == "" && svc.Cluster.Server == "":
				return fmt.Errorf("extension %q: a service's cluster needs a name or a server", ext.Name)
			}
			for _, h := range svc.Headers {
				if h.Name == "" || h.Value == "" {
					return fmt.Errorf("extension %q: a header needs a name and a value", ext.Name)
				}
			}
		}
	}
	return nil
}
