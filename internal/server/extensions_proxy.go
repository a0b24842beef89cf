package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/felixge/httpsnoop"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/server/extproxy"
	"github.com/capstan-cd/capstan/internal/settings"
)

// extensionRoutes serves argocd-cm's proxy extensions under /extensions/,
// when server.enable.proxy.extension turns them on, as Argo CD's API
// server does.
func (s *Server) extensionRoutes() {
	if !s.opts.EnableProxyExtension {
		return
	}
	s.mux.HandleFunc(extproxy.PathPrefix+"/{extension}/{path...}", s.streaming(s.callExtension))
}

// proxies are the extensions' proxies for one version of argocd-cm.
type proxies struct {
	mu      sync.Mutex
	version string
	reg     *extproxy.Registry
	err     error
}

// registry returns the proxies of argocd-cm's current extension.config,
// made again only when argocd-cm changes.
func (s *Server) extensionRegistry(ctx context.Context) (*extproxy.Registry, error) {
	cm, err := settings.LoadArgoCD(ctx, s.opts.Client, s.opts.Namespace)
	if err != nil {
		return nil, err
	}
	p := &s.extensions
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reg == nil && p.err == nil || p.version != cm.Version {
		p.version, p.reg, p.err = cm.Version, nil, nil
		exts, err := cm.ProxyExtensions(ctx, s.opts.Client, s.opts.Namespace)
		if err == nil {
			p.reg, err = extproxy.New(exts)
		}
		p.err = err
	}
	return p.reg, p.err
}

// callExtension forwards a request to an extension's backend, as Argo
// CD's: the Argocd-Application-Name ("<namespace>:<name>") and
// Argocd-Project-Name headers name the Application it is about; the
// caller needs applications get on it and extensions invoke on the
// extension, the Application must be in that project, and the project
// must permit its destination. Every refusal is the same 401, so the
// answer does not tell which Applications exist. Refusals are plain text,
// as Argo CD writes them.
func (s *Server) callExtension(w http.ResponseWriter, r *http.Request, c *caller) error {
	name := r.PathValue("extension")
	ns, appName, projName, err := extensionHeaders(r)
	if err != nil {
		http.Error(w, "Invalid headers: "+err.Error(), http.StatusBadRequest)
		return nil
	}
	app, err := s.authorizeExtension(r.Context(), c, name, ns, appName, projName)
	if err != nil {
		s.opts.Log.Info("unauthorized extension request", "extension", name, "user", c.claims.Subject, "reason", err.Error())
		http.Error(w, "Unauthorized extension request", http.StatusUnauthorized)
		return nil
	}
	reg, err := s.extensionRegistry(r.Context())
	if err != nil {
		s.opts.Log.Warn("proxy extensions cannot be read", "error", err)
		http.Error(w, "Extension not found", http.StatusNotFound)
		return nil
	}
	email, groups := c.identity()
	req := extproxy.Request{Extension: name, Namespace: s.opts.Namespace, App: app,
		UserID: c.claims.Subject, Username: cmp.Or(email, c.claims.Subject), Groups: groups}
	s.opts.Log.Info("sending proxy extension request", "extension", name, "path", r.URL.Path,
		"application", app.Namespace+":"+app.Name, "user", req.Username)
	took := httpsnoop.CaptureMetricsFn(w, func(w http.ResponseWriter) { err = reg.Forward(w, r, req) })
	switch {
	case err == nil:
		s.opts.Metrics.ExtensionRequest(name, took.Code, took.Duration)
	case errors.Is(err, extproxy.ErrUnknown):
		http.Error(w, "Extension not found", http.StatusNotFound)
	case errors.Is(err, extproxy.ErrNoBackend):
		http.Error(w, "invalid extension", http.StatusBadRequest)
	}
	return nil
}

// extensionHeaders reads and checks the headers naming the Application.
func extensionHeaders(r *http.Request) (ns, name, proj string, err error) {
	appHeader := r.Header.Get(extproxy.HeaderApplicationName)
	if appHeader == "" {
		return "", "", "", fmt.Errorf("header %q must be provided", extproxy.HeaderApplicationName)
	}
	parts := strings.Split(appHeader, ":")
	if len(parts) != 2 {
		return "", "", "", fmt.Errorf("invalid value for %q header: expected format: <namespace>:<app-name>", extproxy.HeaderApplicationName)
	}
	ns, name = parts[0], parts[1]
	if len(validation.IsDNS1123Label(ns)) > 0 {
		return "", "", "", errors.New("invalid value for namespace")
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", "", errors.New("invalid value for application name")
	}
	proj = r.Header.Get(extproxy.HeaderProjectName)
	if proj == "" {
		return "", "", "", fmt.Errorf("header %q must be provided", extproxy.HeaderProjectName)
	}
	if len(validation.IsDNS1123Subdomain(proj)) > 0 {
		return "", "", "", errors.New("invalid value for project name")
	}
	return ns, name, proj, nil
}

// authorizeExtension checks the caller may call the extension about the
// Application, and returns it.
func (s *Server) authorizeExtension(ctx context.Context, c *caller, ext, ns, name, projName string) (*v1alpha1.Application, error) {
	object := projName + "/" + name
	if ns != s.opts.Namespace {
		object = projName + "/" + ns + "/" + name
	}
	if err := c.may(rbac.ResourceApplications, rbac.ActionGet, object); err != nil {
		return nil, err
	}
	if err := c.may(rbac.ResourceExtensions, rbac.ActionInvoke, ext); err != nil {
		return nil, err
	}
	if !s.namespaceEnabled(ns) {
		return nil, errors.New(namespaceNotPermitted(ns))
	}
	app := &v1alpha1.Application{}
	if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		return nil, err
	}
	if cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName) != projName {
		return nil, fmt.Errorf("project mismatch provided in the %q header", extproxy.HeaderProjectName)
	}
	if !s.appNamespaceAllowed(ctx, app) {
		return nil, errors.New(appNotAllowedInProject(app))
	}
	proj, err := project.Load(ctx, s.opts.Client, s.opts.Namespace, projName)
	if err != nil {
		return nil, err
	}
	dest, err := s.state.Clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return nil, err
	}
	if !project.DestinationPermitted(proj, project.Destination{Server: dest.Server, Name: dest.Name, Namespace: app.Spec.Destination.Namespace}) {
		return nil, errors.New("the project is not allowed to reach the Application's destination")
	}
	return app, nil
}
