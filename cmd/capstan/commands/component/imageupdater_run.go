package component

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/httpserve"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/updater"
	"github.com/capstan-cd/capstan/internal/imageupdater/webhook"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

// TokenSecretName holds the API token of argocd write-back through the
// API (key argocd.token), as Argo CD Image Updater's installation names it.
const tokenSecretName = "argocd-image-updater-token"

// imageUpdaterFlags are the updater's options, shared by image-updater
// run and capstan run (with a prefix).
type imageUpdaterFlags struct {
	namespace      string
	interval       time.Duration
	once, dryRun   bool
	matchNames     []string
	matchLabel     string
	watchNS        string
	maxConcurrency int
	appsAPI        string
	serverAddr     string
	grpcWeb        bool
	insecure       bool
	plaintext      bool
	token          string
	registriesConf string
	gitDir         string
	metricsPort    int
	webhookPort    int
	listenAddress  string
	webhookSecret  string
	// webhookSecrets are each webhook type's own secret.
	webhookSecrets map[webhook.Kind]*string
	requireSecret  bool
	// level, if set, follows the ConfigMap's log.level.
	level *slog.LevelVar
	// envErr is a bad value of a variable that sets a flag's default.
	envErr error
}

// updaterEnv are Argo CD Image Updater's variables that its install sets
// from argocd-image-updater-config (interval, max_concurrent_apps), and
// the flags whose defaults they set; the command line still wins.
var updaterEnv = map[string]string{"interval": "IMAGE_UPDATER_INTERVAL", "max-concurrency": "MAX_CONCURRENT_APPS"}

// envDefaults sets the flags' defaults from updaterEnv's variables.
func (f *imageUpdaterFlags) envDefaults(fl *pflag.FlagSet) {
	for name, env := range updaterEnv {
		if v := os.Getenv(env); v != "" {
			if err := fl.Set(name, v); err != nil {
				f.envErr = fmt.Errorf("%s %q: %w", env, v, err)
			}
		}
	}
}

func (f *imageUpdaterFlags) add(cmd *cobra.Command, prefix string, standalone bool) {
	fl := cmd.Flags()
	fl.DurationVar(&f.interval, prefix+"interval", 2*time.Minute, "how often every image is checked")
	fl.IntVar(&f.maxConcurrency, prefix+"max-concurrency", 10, "registry requests and Applications processed at once")
	fl.StringVar(&f.gitDir, prefix+"git-dir", filepath.Join(os.TempDir(), "capstan-image-updater"), "directory for the Git write-back work trees")
	// Standalone, the ports are Argo CD Image Updater's; inside capstan
	// run they keep clear of the controller's and the API server's, and
	// webhooks are off unless asked for.
	metricsPort, webhookPort := 8083, 0
	if standalone {
		metricsPort, webhookPort = 8081, 8082
	}
	fl.IntVar(&f.metricsPort, prefix+"metrics-port", metricsPort, "serve the updater's Prometheus metrics on this port (0: off)")
	fl.IntVar(&f.webhookPort, prefix+"webhook-port", webhookPort, "serve registry webhooks at /webhook on this port (0: off)")
	fl.StringVar(&f.listenAddress, prefix+"listen-address", "", "the address the metrics and webhook servers listen on (default: every address)")
	fl.StringVar(&f.webhookSecret, prefix+"webhook-secret", os.Getenv("WEBHOOK_SECRET"), "secret registry webhooks must carry when their type has none of its own (env WEBHOOK_SECRET)")
	// Argo CD Image Updater's secret per webhook type, and its flag and
	// variable names.
	f.webhookSecrets = map[webhook.Kind]*string{}
	for kind, name := range webhookSecretNames {
		env := strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_WEBHOOK_SECRET"
		f.webhookSecrets[kind] = fl.String(prefix+name+"-webhook-secret", os.Getenv(env), fmt.Sprintf("secret %s webhooks must carry (env %s)", kind, env))
	}
	require := true
	if v, err := strconv.ParseBool(os.Getenv("WEBHOOK_REQUIRE_SECRET")); err == nil {
		require = v
	}
	fl.BoolVar(&f.requireSecret, prefix+"webhook-require-secret", require, "refuse webhooks of a type that has no secret (env WEBHOOK_REQUIRE_SECRET)")
	fl.StringVar(&f.watchNS, prefix+"watch-namespaces", os.Getenv("IMAGE_UPDATER_WATCH_NAMESPACES"),
		`namespaces whose ImageUpdaters this updater handles: "" its own, "*" all, or "ns1,ns2" (env IMAGE_UPDATER_WATCH_NAMESPACES)`)
	if !standalone {
		return
	}
	fl.StringVar(&f.namespace, "argocd-namespace", "argocd", "namespace of the Applications, the updater's ConfigMap and the repository Secrets")
	fl.BoolVar(&f.once, "once", false, "run one cycle and exit")
	fl.BoolVar(&f.dryRun, "dry-run", false, "decide and log, write nothing")
	fl.StringSliceVar(&f.matchNames, "match-application-name", nil, "only Applications whose name matches one of these globs")
	fl.StringVar(&f.matchLabel, "match-application-label", "", "only Applications matching this label selector")
	fl.StringVar(&f.appsAPI, "applications-api", "", "kubernetes or argocd (Capstan's API); default: the ConfigMap's applications_api, else kubernetes")
	fl.StringVar(&f.serverAddr, "argocd-server-addr", "", "API server for --applications-api argocd (default: the ConfigMap's argocd.server_addr)")
	fl.BoolVar(&f.grpcWeb, "argocd-grpc-web", false, "reach the API server over gRPC-Web")
	fl.BoolVar(&f.insecure, "argocd-insecure", false, "skip verifying the API server's TLS certificate")
	fl.BoolVar(&f.plaintext, "argocd-plaintext", false, "talk plain HTTP to the API server")
	fl.StringVar(&f.token, "argocd-auth-token", os.Getenv("ARGOCD_TOKEN"), "API token (env ARGOCD_TOKEN; default: Secret "+tokenSecretName+", key argocd.token)")
	fl.StringVar(&f.registriesConf, "registries-conf-path", "", "a registries.conf file replacing the ConfigMap's")
	f.envDefaults(fl)
}

func newImageUpdaterRunCommand() *cobra.Command {
	f := &imageUpdaterFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Check the annotated Applications' images every --interval and write new versions back",
		Example: "  capstan image-updater run\n" +
			"  capstan image-updater run --once --dry-run --match-application-name 'shop-*'\n" +
			"  capstan image-updater run --applications-api argocd --argocd-server-addr argocd-server:443",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.envErr != nil {
				return f.envErr
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg, err := ctrlconfig.GetConfig()
			if err != nil {
				return err
			}
			// log.level in the ConfigMap sets the level once it is read.
			f.level = new(slog.LevelVar)
			log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: f.level}))
			return runImageUpdater(ctx, f, cfg, log, nil)
		},
	}
	f.add(cmd, "", true)
	return cmd
}

// splitNamespaces reads --watch-namespaces: nil for the updater's own.
func splitNamespaces(v string) []string {
	var out []string
	for _, ns := range strings.Split(v, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// runImageUpdater runs the updater until ctx ends (or one cycle with
// --once); onCommit, if set, hears of each pushed repository.
func runImageUpdater(ctx context.Context, f *imageUpdaterFlags, cfg *rest.Config, log *slog.Logger, onCommit func(string)) error {
	c, err := kube.NewClient(cfg)
	if err != nil {
		return err
	}
	events, stopEvents, err := updater.NewEventRecorder(cfg)
	if err != nil {
		return err
	}
	defer stopEvents()
	reg := prometheus.NewRegistry()
	opts := updater.Options{
		Client: c, Namespace: f.namespace, Git: git.NewWriter(f.gitDir, 3), Events: events,
		Metrics: updater.NewMetrics(reg), MaxConcurrency: f.maxConcurrency, DryRun: f.dryRun,
		MatchNames: f.matchNames, RegistriesConf: f.registriesConf, OnCommit: onCommit, Log: log,
		WatchNamespaces: splitNamespaces(f.watchNS),
	}
	if f.matchLabel != "" {
		if opts.MatchLabels, err = labels.Parse(f.matchLabel); err != nil {
			return fmt.Errorf("--match-application-label: %w", err)
		}
	}
	// Where argocd write-back goes follows the ConfigMap each cycle.
	opts.ApplicationsFor = func(ctx context.Context, st config.Settings) (updater.Applications, error) {
		return f.applications(ctx, c, st)
	}
	if f.level != nil {
		// log.level is read once, at start; a broken ConfigMap is
		// reported by each cycle.
		if st, err := updater.New(opts).Settings(ctx); err == nil {
			f.level.Set(logLevel(st.LogLevel))
		}
	}
	u := updater.New(opts)
	if f.once {
		_, err := u.RunOnce(ctx)
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	pushes := make(chan []webhook.Push, 16)
	if f.webhookPort > 0 {
		if f.requireSecret && f.webhookSecret == "" && len(f.secrets()) == 0 {
			log.Warn("Registry webhooks need a secret and none is configured: every webhook is refused (set a --*-webhook-secret, or --webhook-require-secret=false)")
		}
		h := &webhook.Handler{Secret: f.webhookSecret, Secrets: f.secrets(), RequireSecret: f.requireSecret, Log: log, OnPush: func(p []webhook.Push) {
			select {
			case pushes <- p:
			default: // a burst: the checks already queued cover it, the poll the rest
			}
		}}
		g.Go(func() error {
			return serveAt(ctx, net.JoinHostPort(f.listenAddress, strconv.Itoa(f.webhookPort)), "/webhook", h)
		})
	}
	if f.metricsPort > 0 {
		// Metrics, and the probes Image Updater's install checks on the
		// same port.
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
		mux.Handle("/healthz", ok)
		mux.Handle("/readyz", ok)
		g.Go(func() error {
			return httpserve.ListenAndServe(ctx, net.JoinHostPort(f.listenAddress, strconv.Itoa(f.metricsPort)), mux)
		})
	}
	g.Go(func() error { return u.Run(ctx, f.interval, pushes) })
	return g.Wait()
}

// webhookSecretNames name each webhook type's secret as Argo CD Image
// Updater does: --NAME-webhook-secret, NAME_WEBHOOK_SECRET.
var webhookSecretNames = map[webhook.Kind]string{
	webhook.DockerHub: "docker", webhook.GitHub: "ghcr", webhook.Quay: "quay", webhook.Harbor: "harbor",
	webhook.AliyunACR: "aliyun-acr", webhook.AzureACR: "acr", webhook.CloudEvents: "cloudevents",
}

// secrets are the webhook types' own secrets that are set.
func (f *imageUpdaterFlags) secrets() map[webhook.Kind]string {
	out := map[webhook.Kind]string{}
	for kind, s := range f.webhookSecrets {
		if *s != "" {
			out[kind] = *s
		}
	}
	return out
}

// applications picks where argocd write-back goes: the Kubernetes API,
// or Capstan's API with a token from the flags or the token Secret.
func (f *imageUpdaterFlags) applications(ctx context.Context, c client.Client, st config.Settings) (updater.Applications, error) {
	api := f.appsAPI
	if api == "" {
		api = st.ApplicationsAPI
	}
	switch api {
	case "", "kubernetes":
		return &updater.KubernetesApplications{Client: c}, nil
	case "argocd":
	default:
		return nil, fmt.Errorf("--applications-api %q: want kubernetes or argocd", api)
	}
	server := cmp.Or(f.serverAddr, st.ServerAddr)
	if server == "" {
		return nil, errors.New("--applications-api argocd needs --argocd-server-addr or argocd.server_addr in the ConfigMap")
	}
	token := f.token
	if token == "" {
		var s corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: f.namespace, Name: tokenSecretName}, &s); err != nil {
			return nil, fmt.Errorf("--applications-api argocd needs a token: reading Secret %s/%s: %w", f.namespace, tokenSecretName, err)
		}
		if token = strings.TrimSpace(string(s.Data["argocd.token"])); token == "" {
			return nil, fmt.Errorf("secret %s/%s has no argocd.token", f.namespace, tokenSecretName)
		}
	}
	return &updater.APIApplications{Client: apiclient.New(apiclient.Server{
		Server: server, GRPCWeb: f.grpcWeb || st.GRPCWeb, Insecure: f.insecure || st.Insecure, PlainText: f.plaintext || st.PlainText,
	}, token)}, nil
}

// serveAt serves one handler at path on addr until ctx ends.
func serveAt(ctx context.Context, addr, path string, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle(path, h)
	return httpserve.ListenAndServe(ctx, addr, mux)
}

// logLevel maps Argo CD Image Updater's log levels onto slog's.
func logLevel(level string) slog.Level {
	switch level {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
