// Package extproxy forwards the requests of the web UI's extensions to
// their backends, as Argo CD's proxy extensions do: a request to
// /extensions/<name>/<path> goes to <path> on the backend argocd-cm's
// extension.config names, chosen by the Application's destination
// cluster, without the caller's credentials and with headers saying who
// asks about which Application. The API server authorizes a request
// before it gets here.
//
//	reg, err := extproxy.New(exts)               // from settings.ProxyExtensions
//	err = reg.Forward(w, r, extproxy.Request{...}) // after the RBAC checks
package extproxy

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
)

// PathPrefix is where extensions are served.
const PathPrefix = "/extensions"

// The headers a backend receives, as Argo CD names them.
const (
	HeaderNamespace         = "Argocd-Namespace"
	HeaderApplicationName   = "Argocd-Application-Name"
	HeaderProjectName       = "Argocd-Project-Name"
	HeaderTargetClusterURL  = "Argocd-Target-Cluster-URL"
	HeaderTargetClusterName = "Argocd-Target-Cluster-Name"
	HeaderUsername          = "Argocd-Username"
	HeaderUserID            = "Argocd-User-Id"
	HeaderGroups            = "Argocd-User-Groups"
)

// ErrUnknown is an extension no configuration names.
var ErrUnknown = errors.New("extension not found")

// ErrNoBackend is an extension with no service for the Application's
// destination cluster.
var ErrNoBackend = errors.New("no backend of the extension serves the application's destination cluster")

// Registry holds a reverse proxy per service of each extension.
type Registry struct {
	byName map[string]*extension
}

type extension struct {
	// only is the service of an extension that has one.
	only *httputil.ReverseProxy
	// byCluster are the services of one with several, by the cluster's
	// name, server URL, or both, as each service names it.
	byCluster map[cluster]*httputil.ReverseProxy
}

type cluster struct{ name, server string }

// New makes the proxies of the extensions (settings.ProxyExtensions, so
// already checked).
func New(exts []settings.ProxyExtension) (*Registry, error) {
	r := &Registry{byName: map[string]*extension{}}
	for _, ext := range exts {
		e := &extension{byCluster: map[cluster]*httputil.ReverseProxy{}}
		transport := newTransport(ext.Backend)
		for _, svc := range ext.Backend.Services {
			p, err := newProxy(svc, transport)
			if err != nil {
				return nil, fmt.Errorf("extension %q: %w", ext.Name, err)
			}
			if len(ext.Backend.Services) == 1 {
				e.only = p
				continue
			}
			for _, k := range clusterKeys(svc.Cluster) {
				if _, dup := e.byCluster[k]; dup {
					return nil, fmt.Errorf("extension %q: two services for cluster %s%s", ext.Name, k.name, k.server)
				}
				e.byCluster[k] = p
			}
		}
		r.byName[ext.Name] = e
	}
	return r, nil
}

// Has reports whether an extension is configured.
func (r *Registry) Has(name string) bool {
	_, ok := r.byName[name]
	return ok
}

// Request is an authorized call of an extension about an Application.
type Request struct {
	// Extension is the extension's name, from the path.
	Extension string
	// Namespace is the control namespace.
	Namespace string
	// App is the Application the call is about.
	App *v1alpha1.Application
	// UserID, Username and Groups say who calls.
	UserID, Username string
	Groups           []string
}

// Forward sends r to the extension's backend for the Application's
// destination and copies the answer to w: ErrUnknown or ErrNoBackend
// before anything is written.
func (reg *Registry) Forward(w http.ResponseWriter, r *http.Request, req Request) error {
	e, ok := reg.byName[req.Extension]
	if !ok {
		return ErrUnknown
	}
	dest := req.App.Spec.Destination
	p := e.only
	if p == nil {
		p = e.byCluster[cluster{name: dest.Name, server: dest.Server}]
	}
	if p == nil {
		return ErrNoBackend
	}
	out := r.Clone(r.Context())
	out.URL.Path = strings.TrimPrefix(r.URL.Path, PathPrefix+"/"+req.Extension)
	out.URL.RawPath = ""
	h := out.Header
	// The caller's credentials never reach the backend.
	h.Del("Authorization")
	h.Del("Cookie")
	h.Set(HeaderNamespace, req.Namespace)
	for k, v := range map[string]string{
		HeaderTargetClusterName: dest.Name, HeaderTargetClusterURL: dest.Server,
		HeaderUserID: req.UserID, HeaderUsername: req.Username, HeaderGroups: strings.Join(req.Groups, ","),
	} {
		if v != "" {
			h.Set(k, v)
		} else {
			h.Del(k)
		}
	}
	p.ServeHTTP(w, out)
	return nil
}

// clusterKeys are the keys a service is found by: the cluster's name, its
// server URL, and both together when it names both, as an Application's
// destination may.
func clusterKeys(c *settings.ProxyCluster) []cluster {
	var keys []cluster
	if c.Name != "" {
		keys = append(keys, cluster{name: c.Name})
	}
	if c.Server != "" {
		keys = append(keys, cluster{server: c.Server})
	}
	if c.Name != "" && c.Server != "" {
		keys = append(keys, cluster{name: c.Name, server: c.Server})
	}
	return keys
}

// newProxy is a reverse proxy to one service, adding its headers.
func newProxy(svc settings.ProxyService, transport http.RoundTripper) (*httputil.ReverseProxy, error) {
	target, err := url.Parse(svc.URL)
	if err != nil {
		return nil, fmt.Errorf("service url %q: %w", svc.URL, err)
	}
	if target.Scheme != "http" && target.Scheme != "https" {
		return nil, fmt.Errorf("service url %q: want an http or https URL", svc.URL)
	}
	headers := svc.Headers
	return &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetXForwarded() // the caller's address, host and scheme, as Argo CD sends them
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.Host = target.Host
			for _, hd := range headers {
				pr.Out.Header.Set(hd.Name, hd.Value)
			}
		},
	}, nil
}

// newTransport connects to a backend as its configuration says.
func newTransport(b settings.ProxyBackend) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: b.ConnectionTimeout.Duration, KeepAlive: b.KeepAlive.Duration}).DialContext,
		MaxIdleConns:          b.MaxIdleConnections,
		IdleConnTimeout:       b.IdleConnectionTimeout.Duration,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
