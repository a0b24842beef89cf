package component

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/server/ui"
	"github.com/capstan-cd/capstan/internal/version"
)

type serverFlags struct {
	address      string
	port         int
	insecure     bool
	dex          string
	dexPlaintext bool
	dexStrictTLS bool
	basehref     string
	rootpath     string
	xFrame       string
	csp          string
	extensions   string
	replace      bool
	appNS        []string
	hydrator     bool
	tls          *certs.TLSPolicy
	disableAuth  bool
	gzip         bool
	staticAssets string
	hooks        int
	hookWorkers  int
	proxyExt     bool
	noSwagger    bool
	contentTypes string
	cookies      int
	// recorder counts logins and extension requests for the metrics
	// port; nil in the controller's in-process API server.
	recorder *metrics.Server
}

func (f *serverFlags) add(cmd *cobra.Command, prefix string) {
	cmd.Flags().StringVar(&f.address, prefix+"address", "", "address of the API server (default: every address)")
	cmd.Flags().StringVar(&f.dex, prefix+"dex-server", "argocd-dex-server:5556", "Dex's address, for argocd-cm's dex.config (host:port)")
	cmd.Flags().BoolVar(&f.dexPlaintext, prefix+"dex-server-plaintext", false, "reach Dex over HTTP (one run with --disable-tls)")
	cmd.Flags().BoolVar(&f.dexStrictTLS, prefix+"dex-server-strict-tls", false,
		"verify Dex's certificate against argocd-dex-server-tls as mounted under "+filepath.Join(cmdutil.DefaultAppConfigPath, dexTLSDir))
	cmd.Flags().IntVar(&f.port, prefix+"port", 8080, "port of the API server (REST, TLS unless --"+prefix+"insecure); 0: off")
	cmd.Flags().BoolVar(&f.insecure, prefix+"insecure", false, "serve the API over plain HTTP, behind a TLS-terminating ingress")
	cmd.Flags().StringVar(&f.basehref, prefix+"basehref", "/", "path the web UI is served under, behind a reverse proxy that strips it")
	cmd.Flags().StringVar(&f.rootpath, prefix+"rootpath", "", "serve the API and the UI under this path, behind a reverse proxy that keeps it")
	cmd.Flags().BoolVar(&f.replace, prefix+"sync-with-replace-allowed", true, "let users ask a sync to replace objects (Replace=true)")
	cmd.Flags().StringVar(&f.xFrame, prefix+"x-frame-options", ui.DefaultXFrameOptions, `the web UI's X-Frame-Options header ("-": none)`)
	cmd.Flags().StringVar(&f.csp, prefix+"content-security-policy", ui.DefaultContentSecurityPolicy, `the web UI's Content-Security-Policy header ("-": none)`)
	f.tls = addTLSPolicyFlags(cmd, prefix)
	cmd.Flags().StringVar(&f.extensions, prefix+"ui-extensions-dir", ui.DefaultExtensionsDir, "directory whose extension*.js files the web UI loads, as Argo CD's UI extensions")
	cmd.Flags().StringVar(&f.staticAssets, prefix+"staticassets", ui.DefaultStaticAssetsDir, "directory whose files the web UI serves beside its own (a style sheet ui.cssurl names)")
	cmd.Flags().BoolVar(&f.gzip, prefix+"enable-gzip", true, "compress the REST API's responses for clients that take gzip")
	cmd.Flags().IntVar(&f.hooks, prefix+"webhook-parallelism-limit", 50, "how many Git webhooks are handled at once; later ones wait their turn")
	cmd.Flags().IntVar(&f.hookWorkers, prefix+"webhook-refresh-workers", 20, "how many refresh annotations webhooks write at once (without an in-process controller)")
	cmd.Flags().BoolVar(&f.proxyExt, prefix+"enable-proxy-extension", false, "forward the web UI's extension requests to the backends argocd-cm's extension.config names, under /extensions/")
	cmd.Flags().BoolVar(&f.noSwagger, prefix+"disable-swagger-ui", false, "serve neither the Swagger UI (/swagger-ui) nor its document (/swagger.json)")
	cmd.Flags().StringVar(&f.contentTypes, prefix+"api-content-types", "application/json",
		"semicolon-separated body types a REST request other than a GET may send (the UI's application/yaml is always taken; empty: any)")
	cmd.Flags().IntVar(&f.cookies, prefix+"max-cookie-number", server.DefaultMaxCookieNumber,
		"how many cookies a browser session's token may be cut into; a login whose token needs more fails")
	cmd.Flags().BoolVar(&f.disableAuth, prefix+"disable-auth", false, "let every caller in as an administrator, without a session or RBAC (only behind something that authenticates)")
}

// apiContentTypes are --api-content-types' types.
func (f *serverFlags) apiContentTypes() []string {
	var out []string
	for _, t := range strings.Split(f.contentTypes, ";") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// envAPIContentTypes is server.api.content.types: set but empty, it takes
// any type, as in Argo CD (another empty variable leaves a flag's default).
const envAPIContentTypes = "ARGOCD_API_CONTENT_TYPES"

// openContentTypes makes an empty envAPIContentTypes clear the flag.
func (f *serverFlags) openContentTypes(cmd *cobra.Command) {
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if pre != nil {
			if err := pre(cmd, args); err != nil {
				return err
			}
		}
		if v, set := os.LookupEnv(envAPIContentTypes); set && v == "" && !cmd.Flags().Changed("api-content-types") {
			f.contentTypes = ""
		}
		return nil
	}
}

// envGRPCTimeHistogram, "true", serves grpc_server_handling_seconds.
const envGRPCTimeHistogram = "ARGOCD_ENABLE_GRPC_TIME_HISTOGRAM"

func newServerCommand() *cobra.Command {
	f := &serverFlags{}
	var namespace string
	mf := &metricsFlags{}
	rc := &cmdutil.RepoClientFlags{}
	lf := &logFlags{}
	tr := &otlpFlags{}
	cmd := &cobra.Command{
		Use:     "server",
		Example: "  capstan server --repo-server argocd-repo-server:8081\n  capstan server --insecure --port 8080   # behind a TLS-terminating ingress",
		Short:   "Serve the API (Argo CD's REST paths) on one port, TLS by default",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log, err := lf.logger()
			if err != nil {
				return err
			}
			// Before the repo server's client, which traces its calls then.
			flush, err := tr.start(ctx, log)
			if err != nil {
				return err
			}
			defer flush()
			client, err := rc.Dial()
			if err != nil {
				return err
			}
			defer client.Close()
			f.recorder = metrics.NewServer(version.Get().Version)
			if on, _ := strconv.ParseBool(os.Getenv(envGRPCTimeHistogram)); on {
				f.recorder.EnableHandlingTime()
			}
			mf.serveHandler(ctx, log, f.recorder.Handler())
			return runServer(ctx, f, namespace, log, client, nil, nil)
		},
	}
	f.add(cmd, "")
	lf.add(cmd)
	tr.add(cmd, "argocd-server")
	cmd.Flags().StringVar(&namespace, "namespace", "argocd", "control namespace holding Applications, AppProjects and settings")
	cmd.Flags().StringSliceVar(&f.appNS, "application-namespaces", nil, "other namespaces (globs) whose Applications are served; their projects must list them in sourceNamespaces")
	cmd.Flags().BoolVar(&f.hydrator, "hydrator-enabled", false, "serve the source hydrator's push credentials (write-repositories, write-repocreds; argocd-cmd-params-cm hydrator.enabled)")
	rc.Add(cmd, "server/tls")
	mf.add(cmd, 8083)
	bindEnv(cmd, serverEnv)
	f.openContentTypes(cmd)
	readsEnv(cmd, envKubeQPS, envKubeBurst, envGRPCTimeHistogram)
	readsEnv(cmd, kubehttp.Env...)
	readsEnv(cmd, // and the SCM policy of ApplicationSet previews:
		cmdutil.EnvAllowedSCMProviders, cmdutil.EnvEnableSCMProviders, cmdutil.EnvTokenRefStrictMode, cmdutil.EnvSCMRootCAPath)
	acceptEnv(cmd, serverNoEffect...)
	return cmd
}

// metricsRecorder is what counts for the metrics port, if anything.
func (f *serverFlags) metricsRecorder() server.Metrics {
	if f.recorder == nil {
		return nil
	}
	return f.recorder
}

// runServer serves the API until ctx ends; repoChanged, if set, hears of
// pushed repositories (the in-process controller).
func runServer(ctx context.Context, f *serverFlags, namespace string, log *slog.Logger, r repo.Server, shared *kube.SharedCache, repoChanged func(repo.Change)) error {
	if f.port <= 0 {
		return nil
	}
	// Argo CD's API server takes its client's rate from these, not flags.
	cfg, tuning, err := kubeConfig(float32(envFloat(envKubeQPS, 50)), envInt(envKubeBurst, 100))
	if err != nil {
		return err
	}
	dex, err := f.dexServer()
	if err != nil {
		return err
	}
	// The API server waits for the Kubernetes API and the CRDs (the
	// controller installs them) rather than exit.
	if err := kube.WaitForCRDs(ctx, cfg, kube.PrepareOptions{Namespace: namespace, Log: log}); err != nil {
		return nil // ctx ended
	}
	// Applications, projects, settings and Secrets of the control
	// namespace are read from an informer cache.
	c, informers, err := cachedClient(ctx, cfg, namespace, shared)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	scm, err := cmdutil.SCMPolicyFromEnv()
	if err != nil {
		return err
	}
	var srv *server.Server
	err = kube.Until(ctx, log, "the API server's settings", kube.Backoff{}, func(ctx context.Context) (err error) {
		srv, err = server.New(ctx, server.Options{Client: c, Informers: informers, Config: cfg, KubeTransport: tuning, Renderer: r, Namespace: namespace, ApplicationNamespaces: f.appNS, Insecure: f.insecure, BaseHref: f.basehref, RootPath: f.rootpath, XFrameOptions: f.xFrame, ContentSecurityPolicy: f.csp, ExtensionsDir: f.extensions, DisableSyncReplace: !f.replace, HydratorEnabled: f.hydrator, TLS: *f.tls,
			DisableAuth: f.disableAuth, EnableGZip: f.gzip, StaticAssetsDir: f.staticAssets, Log: log,
			WebhookParallelism: f.hooks, WebhookRefreshWorkers: f.hookWorkers, EnableProxyExtension: f.proxyExt, DisableSwaggerUI: f.noSwagger, APIContentTypes: f.apiContentTypes(), MaxCookieNumber: f.cookies, Metrics: f.metricsRecorder(), RepoChanged: repoChanged, Dex: dex,
			AppSetPreview: cmdutil.AppSetPreview(r, c, namespace, scm)})
		return err
	})
	if err != nil {
		return nil // ctx ended
	}
	l, err := net.Listen("tcp", net.JoinHostPort(f.address, strconv.Itoa(f.port)))
	if err != nil {
		return fmt.Errorf("API server: %w", err)
	}
	log.Info("serving the API", "addr", l.Addr().String(), "tls", !f.insecure)
	return srv.Serve(ctx, l)
}

// cachedClient reads namespace from shared, or from a cache of its own.
func cachedClient(ctx context.Context, cfg *rest.Config, namespace string, shared *kube.SharedCache) (client.Client, ctrlcache.Informers, error) {
	if shared != nil {
		return kube.CachedClient(ctx, cfg, namespace, shared.View())
	}
	return kube.NewCachedClient(ctx, cfg, namespace)
}

// dexServer is where the API server finds Dex.
func (f *serverFlags) dexServer() (server.DexServer, error) {
	d := server.DexServer{Address: f.dex, Plaintext: f.dexPlaintext}
	if u, err := url.Parse(f.dex); err == nil && u.Host != "" {
		// Argo CD's settings may name it as a URL.
		d.Address, d.Plaintext = u.Host, f.dexPlaintext || u.Scheme == "http"
	}
	if f.dexStrictTLS && !d.Plaintext {
		pool, err := certs.Pool(cmdutil.AppConfigDir(dexTLSDir))
		if err != nil {
			return d, fmt.Errorf("strict TLS to Dex: %w", err)
		}
		d.RootCAs = pool
	}
	return d, nil
}
