// Package server is Capstan's API server: Argo CD's REST paths and JSON
// shapes on one port, TLS by default with the certificate kept in
// argocd-secret (plain HTTP on that port is redirected to HTTPS), local
// accounts with sessions and API keys, and RBAC on every call.
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server/ui"
	"github.com/capstan-cd/capstan/internal/session"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/tracing"
	"github.com/capstan-cd/capstan/internal/version"
)

// tokenCookie carries the session token for browsers, as Argo CD's UI uses.
const tokenCookie = "argocd.token"

// Options configure a Server. Client and Namespace are required.
type Options struct {
	// Client reads and writes Capstan's objects (a cached client in production).
	Client client.Client
	// Informers, if set, are the informer cache behind Client for
	// Namespace: the streams of that namespace's Applications follow its
	// informer instead of watching the API server themselves. Default:
	// the streams of each namespace share an informer of their own, held
	// while one of them is open.
	Informers ctrlcache.Informers
	// Namespace is the control namespace holding argocd-* settings.
	Namespace string
	// ApplicationNamespaces are other namespaces (globs) whose
	// Applications are served (--application-namespaces), each also only
	// when its project lists the namespace in sourceNamespaces. Default
	// none: the control namespace's only.
	ApplicationNamespaces []string
	// Config reaches the control cluster: watches for the stream endpoint
	// and the in-cluster destination. Required.
	Config *rest.Config
	// KubeTransport tunes the clients of the destination clusters read
	// from Secrets, as Config's are (ARGOCD_K8S_*). Default client-go's.
	KubeTransport kubehttp.Options
	// Renderer renders Applications' sources (manifests, diffs) and
	// explores repositories (branches, apps, commit metadata). Required.
	Renderer repo.Server
	// Insecure serves plain HTTP (behind a TLS-terminating ingress).
	Insecure bool
	// Hosts are the names the generated certificate is for. Default localhost.
	Hosts []string
	// RepoChanged, if set, hears of each repository URL a Git webhook
	// reports pushed, with the files it changed (the in-process controller
	// checks it at once).
	// Otherwise the Applications following the pushed branch get the
	// refresh annotation.
	RepoChanged func(repo.Change)
	// Log receives errors. Default: slog's default logger.
	Log *slog.Logger
	// Dex is where the bundled Dex runs, for a dex.config. Default:
	// argocd-dex-server:5556 over HTTPS.
	Dex DexServer
	// BaseHref is the path the web UI is served under behind a reverse
	// proxy that strips it (Argo CD's --basehref, server.basehref).
	// Default "/", or RootPath.
	BaseHref string
	// RootPath serves everything, API and UI, under a path (Argo CD's
	// --rootpath, server.rootpath), for a proxy that passes it on.
	// Default none.
	RootPath string
	// DisableSyncReplace refuses syncs asking for Replace=true, as Argo
	// CD's server.sync.replace.allowed "false". Default false.
	DisableSyncReplace bool
	// HydratorEnabled serves the source hydrator's push credentials
	// (/api/v1/write-repositories, /api/v1/write-repocreds), as Argo CD's
	// hydrator.enabled does; off, they answer 501 "hydrator is disabled".
	HydratorEnabled bool
	// TLS is the TLS versions and cipher suites served (--tlsminversion,
	// --tlsmaxversion, --tlsciphers). Default: TLS 1.2 to 1.3 with Go's
	// cipher suites.
	TLS certs.TLSPolicy
	// XFrameOptions and ContentSecurityPolicy are the web UI page's
	// headers (see ui.Options). Default: ui's defaults.
	XFrameOptions, ContentSecurityPolicy string
	// ExtensionsDir is where the web UI's extensions are read from (see
	// ui.Options). Default: none.
	ExtensionsDir string
	// AppSetPreview renders the Applications an ApplicationSet would make,
	// writing nothing (an applicationset.Previewer's Preview): the
	// ApplicationSet service's Generate. Default: Generate answers
	// Unimplemented.
	AppSetPreview func(ctx context.Context, as *v1alpha1.ApplicationSet) ([]*v1alpha1.Application, error)
	// Headless serves one local user with the kubeconfig's rights, as the
	// CLI's --core mode runs it: no login, every caller an administrator,
	// and the install's settings only read, never written (no generated
	// secret key, admin password or default project). Default false.
	Headless bool
	// DisableAuth lets every caller in as an administrator, with no
	// session and no RBAC check, as Argo CD's server.disable.auth: only
	// for an API that something in front of it already guards. Default
	// false.
	DisableAuth bool
	// EnableGZip compresses the REST API's responses for clients that
	// take gzip, as Argo CD's server.enable.gzip; event streams, gRPC and
	// the web UI's own files (compressed once at start) are left as they
	// are. Default false; `capstan server` turns it on, as Argo CD does.
	EnableGZip bool
	// WebhookParallelism is how many Git webhooks are handled at once, as
	// Argo CD's server.webhook.parallelism.limit; later ones wait their
	// turn. Default 50.
	WebhookParallelism int
	// WebhookRefreshWorkers is how many refresh annotations the webhooks
	// write at once, without an in-process controller, as Argo CD's
	// server.webhook.refresh.workers. Default 20.
	WebhookRefreshWorkers int
	// EnableProxyExtension serves argocd-cm's proxy extensions
	// (extension.config) under /extensions/, as Argo CD's
	// server.enable.proxy.extension. Default false.
	EnableProxyExtension bool
	// StaticAssetsDir adds a directory's files to the web UI's (see
	// ui.Options), as Argo CD's server.staticassets. Default: none.
	StaticAssetsDir string
	// APIContentTypes are the body types a REST request under /api/ that
	// is not a GET may send, as Argo CD's server.api.content.types (see
	// contentTypes). Default: any; `capstan server` takes
	// application/json, as Argo CD does.
	APIContentTypes []string
	// DisableSwaggerUI leaves /swagger-ui and /swagger.json unserved, as
	// Argo CD's server.disable.swagger.ui. Default false.
	DisableSwaggerUI bool
	// MaxCookieNumber is how many cookies a browser session's token may be
	// cut into, as Argo CD's server.http.cookie.maxnumber; a login whose
	// token needs more fails. Default DefaultMaxCookieNumber (20).
	MaxCookieNumber int
	// Metrics counts logins, proxy extension requests and gRPC calls (a
	// metrics.Server). Default: nothing is counted.
	Metrics Metrics
}

// Metrics records what the API server's metrics count.
type Metrics interface {
	// Login counts a local account's login attempt.
	Login(ok bool)
	// ExtensionRequest counts a request a proxy extension's backend
	// answered, with its status and duration.
	ExtensionRequest(extension string, status int, took time.Duration)
	// RPCStarted counts a call of Argo CD's gRPC API to procedure
	// ("/application.ApplicationService/Get") of kind ("unary",
	// "server_stream", "client_stream").
	RPCStarted(procedure, kind string)
	// RPCHandled counts that call's end: its gRPC code ("OK",
	// "PermissionDenied", …), the messages it received and sent, and how
	// long it took.
	RPCHandled(procedure, kind, code string, received, sent int, took time.Duration)
}

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) Login(bool)                                                 {}
func (noMetrics) ExtensionRequest(string, int, time.Duration)                {}
func (noMetrics) RPCStarted(string, string)                                  {}
func (noMetrics) RPCHandled(string, string, string, int, int, time.Duration) {}

// Server serves the API.
type Server struct {
	opts     Options
	watcher  client.WithWatch
	state    *appstate.Reader
	secret   *settings.ServerSecret
	sessions *session.Manager
	// revocations are the sessions logged out before they expire.
	revocations *revocations
	mux         *routeMux

	ui       http.Handler
	gzip     gzipper // nil: responses as they are
	ssoCache ssoCache
	limits   *limits
	encoded  encodedApps
	feeds    appFeeds
	ownApps  kube.Index[*v1alpha1.Application]
	conns    connections
	// clusterProbes ask each cluster its version, for the cluster API.
	clusterProbes clusterProbes
	hooks         *webhookWork
	// extensions are the proxy extensions' proxies.
	extensions proxies

	rbacMu sync.Mutex
	rbac   map[string]*rbac.Enforcer // by policy (and project) version
}

// New prepares a Server: it fills in argocd-secret on first start (secret
// key, admin password, certificate) and registers the routes.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Client == nil || opts.Config == nil || opts.Renderer == nil {
		return nil, errors.New("server options need a Client, a Config and a Renderer")
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if err := opts.TLS.Apply(&tls.Config{}); err != nil { //nolint:gosec // only checks the policy
		return nil, err
	}
	if len(opts.Hosts) == 0 {
		opts.Hosts = []string{"localhost", "127.0.0.1", "argocd-server"}
	}
	secret, err := serverSecret(ctx, opts)
	if err != nil {
		return nil, err
	}
	sessions, err := session.NewManager(secret.SecretKey)
	if err != nil {
		return nil, err
	}
	watcher, err := kube.NewWatchClient(opts.Config)
	if err != nil {
		return nil, err
	}
	state := &appstate.Reader{
		Client: opts.Client, Namespace: opts.Namespace, Renderer: opts.Renderer,
		Clusters: &cluster.Registry{Reader: opts.Client, Namespace: opts.Namespace, InCluster: opts.Config, Transport: opts.KubeTransport},
	}
	opts.RootPath = strings.TrimSuffix(opts.RootPath, "/")
	if opts.RootPath != "" && !strings.HasPrefix(opts.RootPath, "/") {
		opts.RootPath = "/" + opts.RootPath
	}
	if opts.RootPath != "" && strings.Trim(opts.BaseHref, "/") == "" {
		opts.BaseHref = opts.RootPath
	}
	page, err := ui.New(ui.Options{BaseHref: opts.BaseHref, XFrameOptions: opts.XFrameOptions, ContentSecurityPolicy: opts.ContentSecurityPolicy,
		ExtensionsDir: opts.ExtensionsDir, StaticAssetsDir: opts.StaticAssetsDir, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	if opts.DisableAuth {
		opts.Log.Warn("authentication is disabled (server.disable.auth): every caller is an administrator")
	}
	s := &Server{opts: opts, watcher: watcher, state: state, secret: secret, sessions: sessions, mux: newRouteMux(), limits: newLimits(), rbac: map[string]*rbac.Enforcer{}, ui: page,
		hooks: newWebhookWork(ctx, opts.WebhookParallelism, opts.WebhookRefreshWorkers)}
	if opts.EnableGZip {
		if s.gzip, err = newGzipper(); err != nil {
			return nil, err
		}
	}
	s.revocations = &revocations{s: s}
	if err := s.revocations.follow(ctx); err != nil {
		return nil, err
	}
	s.routes()
	if err := s.argoRoutes(); err != nil {
		return nil, err
	}
	return s, nil
}

// routes registers every route: the session, settings and other
// server-wide ones here, and each service's in the file that answers it.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /api/version", s.version)
	s.mux.HandleFunc("POST /api/v1/session", s.public(s.login))
	s.mux.HandleFunc("DELETE /api/v1/session", s.logout)
	s.mux.HandleFunc("GET /api/logout", s.logoutRedirect)
	s.mux.HandleFunc("GET "+logoutPath, s.logoutRedirect)
	s.mux.HandleFunc("POST "+logoutPath, s.logoutRedirect)
	s.mux.HandleFunc("GET /healthz", healthz)
	s.mux.HandleFunc("GET /api/badge", s.badge)
	if !s.opts.DisableSwaggerUI {
		s.mux.HandleFunc("GET /swagger.json", s.swaggerJSON)
		s.mux.HandleFunc("GET /swagger-ui", s.swaggerUI)
	}
	s.mux.HandleFunc("GET /api/v1/session/userinfo", s.userInfo)
	s.mux.HandleFunc("POST "+webhookPath, s.public(s.webhook))
	s.mux.HandleFunc("GET /api/v1/settings", s.public(s.settings))
	s.mux.HandleFunc("GET /api/v1/settings/plugins", s.api(s.plugins))
	s.mux.HandleFunc("GET /auth/login", s.public(s.ssoLogin))
	s.mux.HandleFunc("GET /auth/callback", s.public(s.ssoCallback))
	s.mux.Handle(settings.DexPath+"/", s.dexProxy())
	s.applicationRoutes()
	s.applicationSetRoutes()
	s.projectRoutes()
	s.accountRoutes()
	s.clusterRoutes()
	s.repositoryServiceRoutes()
	s.exploreRoutes()
	s.certificateRoutes()
	s.gpgKeyRoutes()
	s.notificationRoutes()
	s.extensionRoutes()
	s.uiRoutes()
}

// serverSecret is argocd-secret, filled in on a first start (with the
// default project); a headless server only needs a key of its own.
func serverSecret(ctx context.Context, opts Options) (*settings.ServerSecret, error) {
	if opts.Headless {
		return &settings.ServerSecret{SecretKey: []byte(rand.Text() + rand.Text())}, nil
	}
	secret, err := settings.EnsureServerSecret(ctx, opts.Client, opts.Namespace, opts.Hosts)
	if err != nil {
		return nil, err
	}
	if err := settings.EnsureDefaultProject(ctx, opts.Client, opts.Namespace); err != nil {
		return nil, err
	}
	// argocd --core and argocd admin read these and fail when one is
	// missing, as under capstan run, which has no install manifests.
	if err := settings.EnsureConfigMaps(ctx, opts.Client, opts.Namespace); err != nil {
		return nil, err
	}
	return secret, nil
}

// Handler is the API as an http.Handler, with its request limits and
// its refusal of cross-site requests riding on the session cookie.
func (s *Server) Handler() http.Handler {
	var h http.Handler = s.mux
	if s.opts.RootPath != "" {
		h = http.StripPrefix(s.opts.RootPath, s.mux)
	}
	h = s.limit(s.browserSafe(s.contentTypes(h)))
	if s.gzip != nil {
		h = s.gzip(h)
	}
	if tracing.Enabled() {
		// A span per call, named by method and path, continuing a caller's trace.
		h = otelhttp.NewHandler(h, "argocd-server", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return r.Method + " " + r.URL.Path
		}))
	}
	return h
}

// Serve serves on l until ctx ends: TLS (plain HTTP redirected) unless
// Insecure.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second, Protocols: new(http.Protocols)}
	// gRPC needs HTTP/2: over TLS through ALPN, and in plain HTTP (behind
	// an ingress) as h2c; gRPC-Web and REST work over HTTP/1.1 too.
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(s.opts.Insecure)
	if !s.opts.Insecure {
		cfg := &tls.Config{Certificates: []tls.Certificate{s.secret.Certificate}, NextProtos: []string{"h2", "http/1.1"}} //nolint:gosec // versions set by the policy, checked in New
		if err := s.opts.TLS.Apply(cfg); err != nil {
			return err
		}
		l = newTLSOrRedirect(l, cfg)
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, version.Get())
}

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// login checks a local account's password and returns a session token
// (also set as the argocd.token cookie). Each attempt is counted, as
// Argo CD's argocd_login_request_total counts them.
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	err := s.createSession(w, r)
	s.opts.Metrics.Login(err == nil)
	return err
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if err := decode(r, &req, "login request", false); err != nil {
		return err
	}
	if len(req.Username) > session.MaxUsernameLength {
		return badRequest(session.ErrUsernameTooLong.Error())
	}
	accounts, err := settings.Accounts(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	var hash []byte
	if a := accounts[req.Username]; a != nil && a.Enabled && a.Can(settings.CapabilityLogin) {
		hash = a.PasswordHash
	}
	if err := s.sessions.VerifyPassword(req.Username, req.Password, hash); err != nil {
		if errors.Is(err, session.ErrUsernameTooLong) {
			return withStatus(http.StatusBadRequest, err)
		}
		return withStatus(http.StatusUnauthorized, err)
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return err
	}
	ttl, err := cm.SessionDuration()
	if err != nil {
		s.opts.Log.Warn("using the default session duration", "error", err)
	}
	// As Argo CD's: the subject names the capability, the jti the session.
	token, err := s.sessions.Create(req.Username+":"+settings.CapabilityLogin, ttl, rand.Text())
	if err != nil {
		return err
	}
	if err := s.setSession(w, token); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiwire.SessionToken{Token: token})
	return nil
}

// logout answers DELETE /api/v1/session: the session is revoked and its
// cookies dropped.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	s.logoutToken(w, r)
	writeJSON(w, http.StatusOK, map[string]string{})
}

// logoutRedirect answers GET /api/logout, and /auth/logout (Argo CD's
// logout endpoint, which its CLI's logout POSTs the token to as a
// cookie): the session is revoked, its cookies dropped and the browser
// sent to the login page.
func (s *Server) logoutRedirect(w http.ResponseWriter, r *http.Request) {
	s.logoutToken(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// healthz answers GET /healthz for probes: the server is up.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

func (s *Server) userInfo(w http.ResponseWriter, r *http.Request) {
	if s.opts.Headless || s.opts.DisableAuth {
		writeJSON(w, http.StatusOK, apiwire.UserInfo{LoggedIn: true, Username: headlessUser})
		return
	}
	c, raw, err := s.authenticate(r)
	if err != nil {
		writeJSON(w, http.StatusOK, apiwire.UserInfo{LoggedIn: false})
		return
	}
	info := apiwire.UserInfo{LoggedIn: true, Username: c.Subject, Issuer: c.Issuer}
	if email, _ := raw["email"].(string); email != "" {
		info.Username = email
	}
	if groups, ok := raw["groups"].([]any); ok {
		for _, g := range groups {
			if s, ok := g.(string); ok {
				info.Groups = append(info.Groups, s)
			}
		}
	}
	writeJSON(w, http.StatusOK, info)
}

// newID returns a random token id.
func newID() string { return strings.ToLower(rand.Text()) }

// jsonInt is a 64-bit integer in a request body, as a JSON number or, as
// protobuf's JSON mapping writes 64-bit integers, a string.
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not an integer", data)
	}
	*n = jsonInt(v)
	return nil
}

// plugins answers GET /api/v1/settings/plugins: the config management
// plugins whose sidecars listen beside the repo server, which the UI and
// the CLI offer for a source. Any logged-in caller may ask, as in Argo CD.
func (s *Server) plugins(r *http.Request, _ *caller) (any, error) {
	return s.opts.Renderer.Plugins(r.Context(), &repo.PluginsRequest{})
}
