package component

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/kube"
	capmetrics "github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/cache"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
	"github.com/capstan-cd/capstan/internal/repo/reposerver"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/tracing"
)

// repoFlags configure the repo server, alone or inside `capstan run`.
type repoFlags struct {
	// metrics count requests to Git remotes, OCI registries and the
	// manifest cache's Redis, waits for repository locks and render turns;
	// set by the command, not a flag (nil in the controller's in-process
	// repo server).
	metrics     *capmetrics.RepoServer
	root        string
	redis       string
	isolate     bool
	maxMemory   string
	parallelism int
	// pluginExclude are reposerver.plugin.tar.exclusions.
	pluginExclude  []string
	redisDB        int
	redisCompress  string
	sentinels      []string
	sentinelMaster string
	cacheTTL       time.Duration
	gitTimeout     time.Duration
	hiddenDirs     bool
	// ociMaxExtracted, ociNoMax and ociMediaTypes bound OCI sources.
	ociMaxExtracted string
	ociNoMax        bool
	ociMediaTypes   []string
	// helmMaxExtracted and helmNoMax bound unpacked charts; maxDirectory
	// a directory source's manifest files.
	helmMaxExtracted string
	helmNoMax        bool
	maxDirectory     string
	helmUserAgent    string
	lsRemoteLimit    int
	filesMax         string
	filesMaxArchive  string
	builtinGitConfig bool
	// pluginGeneratePaths sends plugins only a source's
	// manifest-generate-paths.
	pluginGeneratePaths bool
	submodules          bool
	// askPass serves Git credentials to plugins (the repo server's own).
	askPass *plugin.AskPass
}

// envRedisKeyPrefix prefixes the manifest cache's Redis keys, as Argo CD's
// variable of the name (there is no flag).
const envRedisKeyPrefix = "ARGOCD_REDIS_KEY_PREFIX"

func (f *repoFlags) add(cmd *cobra.Command, defaultRoot string) {
	cmd.Flags().StringVar(&f.root, "root", filepath.Join(os.TempDir(), defaultRoot), "directory for repository clones and charts")
	cmd.Flags().StringVar(&f.redis, "redis", "", "Redis host:port for a manifest cache shared by replicas (default: in memory)")
	cmd.Flags().BoolVar(&f.isolate, "render-isolation", true, "render Helm, Kustomize and Jsonnet sources in worker processes with a memory limit, so a hostile source cannot exhaust this process")
	cmd.Flags().StringVar(&f.maxMemory, "render-max-memory", "1Gi", "memory limit of each render worker")
	cmd.Flags().IntVar(&f.parallelism, "parallelismlimit", 0, "sources rendered at once; the others wait (0: no limit beyond the render workers)")
	cmd.Flags().IntVar(&f.redisDB, "redisdb", 0, "Redis database of the manifest cache")
	cmd.Flags().StringVar(&f.redisCompress, "redis-compress", string(cache.CompressionGZip), "how the manifest cache's values are stored in Redis: gzip or none")
	cmd.Flags().StringSliceVar(&f.sentinels, "sentinel", nil, "Redis Sentinels (host:port) that name the manifest cache's Redis master, instead of --redis")
	cmd.Flags().StringVar(&f.sentinelMaster, "sentinelmaster", "master", "the Redis master's name at the Sentinels")
	cmd.Flags().BoolVar(&f.hiddenDirs, "include-hidden-directories", false, "recurse into directories whose names start with a dot in directory sources")
	cmd.Flags().DurationVar(&f.gitTimeout, "git-request-timeout", 15*time.Second, "how long a Git remote may take to list its refs (0: no bound)")
	cmd.Flags().DurationVar(&f.cacheTTL, "default-cache-expiration", 24*time.Hour, "how long a rendered source is kept in the manifest cache")
	cmd.Flags().StringVar(&f.ociMaxExtracted, "oci-manifest-max-extracted-size", "1G", "how large the files of one OCI source's artifact may be once unpacked")
	cmd.Flags().BoolVar(&f.ociNoMax, "disable-oci-manifest-max-extracted-size", false, "unpack OCI artifacts of any size")
	cmd.Flags().StringSliceVar(&f.ociMediaTypes, "oci-layer-media-types", ocisource.DefaultLayerMediaTypes, "media types of the OCI layers that may be unpacked")
	cmd.Flags().StringVar(&f.helmMaxExtracted, "helm-manifest-max-extracted-size", "1G", "how large the files of one Helm chart may be once unpacked")
	cmd.Flags().BoolVar(&f.helmNoMax, "disable-helm-manifest-max-extracted-size", false, "unpack Helm charts of any size")
	cmd.Flags().StringVar(&f.maxDirectory, "max-combined-directory-manifests-size", "10M", "how large the manifest files of one directory source may be in all")
	cmd.Flags().StringVar(&f.helmUserAgent, "helm-user-agent", "", "User-Agent sent to Helm chart repositories and registries (default: Helm's)")
	cmd.Flags().StringVar(&f.filesMax, "streamed-manifest-max-extracted-size", "1G", "how large the files of an uploaded source (app diff --local --server-side-generate) may be once unpacked")
	cmd.Flags().StringVar(&f.filesMaxArchive, "streamed-manifest-max-tar-size", "100M",
		"how large an uploaded source's compressed archive may be (the API server takes uploads of up to 16 MiB)")
	cmd.Flags().BoolVar(&f.pluginGeneratePaths, "plugin-use-manifest-generate-paths", false,
		"send a plugin only the directory holding the source and its manifest-generate-paths annotation's paths, not the whole repository")
	cmd.Flags().IntVar(&f.lsRemoteLimit, "git-lsremote-parallelism-limit", 0, "Git ls-remotes run at once; the others wait (0: no limit)")
	cmd.Flags().BoolVar(&f.builtinGitConfig, "enable-builtin-git-config", true, "run git's automatic gc and maintenance in the foreground, so they never race the next fetch")
	cmd.Flags().BoolVar(&f.submodules, "git-submodules", true, "check out the submodules of Git sources, recursively")
	cmd.Flags().StringArrayVar(&f.pluginExclude, "plugin-tar-exclude", envList("ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS", ";"),
		"globs of repository paths not sent to config management plugins (repeatable; ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS, ;-separated)")
}

// quantityFlag reads the size flag name's value, a quantity such as 10M.
func quantityFlag(name, value string) (int64, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil || q.Value() <= 0 {
		return 0, fmt.Errorf("--%s %q: want a quantity such as 10M", name, value)
	}
	return q.Value(), nil
}

// pluginOptions are the plugin client's settings: the flags, and the
// variables Argo CD's sidecars and repo server share (the socket directory,
// the chunk size).
func (f *repoFlags) pluginOptions() (plugin.Options, error) {
	opts := plugin.Options{SocketDir: os.Getenv("ARGOCD_PLUGINSOCKFILEPATH"), Exclude: f.pluginExclude, AskPass: f.askPass,
		UseManifestGeneratePaths: f.pluginGeneratePaths}
	if v := os.Getenv("ARGOCD_CMP_CHUNK_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 4<<20 {
			return opts, fmt.Errorf("ARGOCD_CMP_CHUNK_SIZE=%q: want a number of bytes from 1 to 4194304", v)
		}
		opts.ChunkSize = n
	}
	return opts, nil
}

func newRepoServerCommand() *cobra.Command {
	var address, namespace string
	var port int
	var disableTLS bool
	var clientCAPath string
	var maxMessageMB int
	var policy *certs.TLSPolicy
	metrics := &metricsFlags{}
	rf := &repoFlags{}
	lf := &logFlags{}
	tr := &otlpFlags{}
	cmd := &cobra.Command{
		Use:     "repo-server",
		Example: "  capstan repo-server --port 8081 --redis argocd-redis:6379",
		Short:   "Serve manifest rendering over gRPC for controllers and API servers",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := lf.logger()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Plugin sidecars' git asks for credentials here (provideGitCreds).
			socket := cmp.Or(os.Getenv(plugin.AskPassSocketEnv), plugin.DefaultAskPassSocket)
			if ask, err := plugin.ListenAskPass(socket); err != nil {
				log.Warn("plugins asking for Git credentials get none", "socket", socket, "error", err.Error())
			} else {
				defer ask.Close()
				rf.askPass = ask
			}
			counts := capmetrics.NewRepoServer()
			rf.metrics = counts
			svc, closeCache, err := newRepoService(ctx, namespace, rf)
			if err != nil {
				return err
			}
			defer closeCache()
			metrics.serveHandler(ctx, log, counts.Handler())
			flush, err := tr.start(ctx, log)
			if err != nil {
				return err
			}
			defer flush()
			return serveRepo(ctx, log, repoListener{Address: net.JoinHostPort(address, strconv.Itoa(port)), Namespace: namespace, DisableTLS: disableTLS,
				TLS: *policy, ClientCAPath: clientCAPath, MaxMessageMB: maxMessageMB}, svc)
		},
	}
	cmd.Flags().StringVar(&address, "address", "", "address to serve gRPC on (default: every address)")
	cmd.Flags().IntVar(&port, "port", 8081, "port to serve gRPC on")
	cmd.Flags().IntVar(&maxMessageMB, "grpc-max-size-mb", reposerver.DefaultMaxMessageMB, "largest gRPC message taken or sent, in MiB (a render's manifests, an uploaded source)")
	cmd.Flags().StringVar(&namespace, "namespace", "argocd", "namespace of the repository Secrets")
	metrics.add(cmd, 8084)
	cmd.Flags().BoolVar(&disableTLS, "disable-tls", false,
		"serve gRPC without TLS; by default the certificate is argocd-repo-server-tls as mounted under "+filepath.Join(cmdutil.DefaultAppConfigPath, repoServerTLSDir)+", or a self-signed one made at start")
	policy = addTLSPolicyFlags(cmd, "")
	cmd.Flags().StringVar(&clientCAPath, "client-ca-path", cmdutil.RepoServerClientCAPath(),
		"file of the CA certificates clients' certificates must chain to (mutual TLS); none asked for when it does not exist or is empty")
	rf.add(cmd, "capstan-repo-server")
	lf.add(cmd)
	tr.add(cmd, "argocd-repo-server")
	bindEnv(cmd, repoServerEnv)
	// The flags' defaults and the plugin client read these themselves.
	readsEnv(cmd, "REDIS_PASSWORD", envRedisKeyPrefix, "ARGOCD_PLUGINSOCKFILEPATH", "ARGOCD_CMP_CHUNK_SIZE", "ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS", plugin.AskPassSocketEnv)
	acceptEnv(cmd, repoServerNoEffect...)
	return cmd
}

// newRenderWorkerCommand is what a repo server with render isolation runs
// as its workers; it is not for people.
func newRenderWorkerCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "repo-render-worker",
		Example: "  capstan repo-render-worker   # started by capstan repo-server and capstan run, not by hand",
		Short:   "Render sources sent on stdin (a repo server's render worker)",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return repo.ServeWorker(cmd.Context(), os.Stdin, os.Stdout)
		},
	}
}

// newRepoService is the repo server with credentials from the Secrets of
// namespace, a Redis cache when asked for, and render workers unless told
// otherwise; call the returned function to close the cache.
func newRepoService(ctx context.Context, namespace string, f *repoFlags) (*repo.Service, func(), error) {
	creds, err := secretCredentials(ctx, namespace)
	if err != nil {
		return nil, nil, err
	}
	plugins, err := f.pluginOptions()
	if err != nil {
		return nil, nil, err
	}
	ociMax, err := quantityFlag("oci-manifest-max-extracted-size", f.ociMaxExtracted)
	if err != nil {
		return nil, nil, err
	}
	oci := ocisource.Options{MaxExtractedBytes: ociMax, LayerMediaTypes: f.ociMediaTypes}
	if f.ociNoMax {
		oci.MaxExtractedBytes = -1
	}
	chartMax, err := quantityFlag("helm-manifest-max-extracted-size", f.helmMaxExtracted)
	if err != nil {
		return nil, nil, err
	}
	if f.helmNoMax {
		chartMax = -1
	}
	dirMax, err := quantityFlag("max-combined-directory-manifests-size", f.maxDirectory)
	if err != nil {
		return nil, nil, err
	}
	filesMax, err := quantityFlag("streamed-manifest-max-extracted-size", f.filesMax)
	if err != nil {
		return nil, nil, err
	}
	filesMaxArchive, err := quantityFlag("streamed-manifest-max-tar-size", f.filesMaxArchive)
	if err != nil {
		return nil, nil, err
	}
	opts := repo.Options{Root: f.root, Credentials: creds, ParallelismLimit: f.parallelism, Plugins: plugins, CacheTTL: f.cacheTTL, GitRequestTimeout: f.gitTimeout,
		Directories: directory.Walk{IncludeHidden: f.hiddenDirs, MaxCombinedBytes: dirMax}, OCI: oci, Submodules: f.submodules,
		ChartMaxExtractedBytes: chartMax, HelmUserAgent: f.helmUserAgent, GitLsRemoteParallelism: f.lsRemoteLimit, FilesMaxExtractedBytes: filesMax,
		FilesMaxArchiveBytes: filesMaxArchive, GitNoBuiltinConfig: !f.builtinGitConfig}
	if f.isolate {
		self, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("finding this program to run render workers: %w", err)
		}
		limit, err := resource.ParseQuantity(f.maxMemory)
		if err != nil || limit.Value() <= 0 {
			return nil, nil, fmt.Errorf("--render-max-memory %q: want a quantity such as 1Gi", f.maxMemory)
		}
		opts.Isolation = &repo.Isolation{Command: []string{self, "repo-render-worker"}, MaxMemory: limit.Value()}
	}
	closeCache := func() {}
	var observeRedis func(string, time.Duration, error)
	if m := f.metrics; m != nil {
		opts.ObserveGit = func(r git.Request) { m.GitRequest(r.URL, string(r.Kind), r.Took, r.Err != nil) }
		opts.ObserveOCI = func(r ocisource.Request) { m.OCIRequest(r.URL, string(r.Kind), r.Revision, r.Took, r.Err != nil) }
		opts.WaitingGit, opts.ObserveTurnWait = m.RepoWaiting, m.TurnWait
		observeRedis = func(command string, took time.Duration, err error) { m.RedisRequest(command, took, err != nil) }
	}
	if f.redis != "" || len(f.sentinels) > 0 {
		// The password comes only from the environment (the argocd-redis
		// Secret in the install), never from the command line.
		compression, err := cache.ParseCompression(f.redisCompress)
		if err != nil {
			return nil, nil, fmt.Errorf("--redis-compress: %w", err)
		}
		rc, err := cache.NewRedis(ctx, cache.RedisOptions{Addr: f.redis, Compression: compression, Password: os.Getenv("REDIS_PASSWORD"), DB: f.redisDB,
			SentinelAddrs: f.sentinels, SentinelMaster: f.sentinelMaster, KeyPrefix: os.Getenv(envRedisKeyPrefix), Observe: observeRedis})
		if err != nil {
			return nil, nil, err
		}
		opts.Cache, closeCache = rc, func() { _ = rc.Close() }
	}
	return repo.NewService(opts), closeCache, nil
}

// secretCredentials reads repository Secrets and the TLS and SSH ConfigMaps
// of namespace through an informer cache.
func secretCredentials(ctx context.Context, namespace string) (repo.Credentials, error) {
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes configuration for repository Secrets: %w", err)
	}
	scheme, err := kube.NewScheme()
	if err != nil {
		return nil, err
	}
	hasType, err := labels.NewRequirement(v1alpha1.LabelSecretType, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := ctrlcache.New(cfg, ctrlcache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]ctrlcache.Config{namespace: {}},
		ByObject: map[client.Object]ctrlcache.ByObject{
			&corev1.Secret{}: {Label: labels.NewSelector().Add(*hasType)},
		},
	})
	if err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("reading Secrets and ConfigMaps in %s from %s", namespace, cfg.Host)
	}
	return &settings.RepoCredentials{Reader: c, Namespace: namespace}, nil
}

// repoServerTLSDir is where argocd-repo-server-tls is mounted into the repo
// server, under the configuration path.
const repoServerTLSDir = "reposerver/tls"

// repoListener is how a repo server is served.
type repoListener struct {
	// Address is host:port to listen on.
	Address string
	// Namespace is the install's, for the self-signed certificate's hosts.
	Namespace string
	// DisableTLS serves plain gRPC.
	DisableTLS bool
	// TLS is the versions and ciphers served.
	TLS certs.TLSPolicy
	// ClientCAPath, when set, asks clients for a certificate it signed.
	ClientCAPath string
	// MaxMessageMB bounds each message each way (reposerver.MessageLimits).
	// Default reposerver.DefaultMaxMessageMB.
	MaxMessageMB int
}

// serveRepo serves r over gRPC as l says.
func serveRepo(ctx context.Context, log *slog.Logger, l repoListener, r repo.Server) error {
	opts := append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(reposerver.LogRequests(log))}, reposerver.MessageLimits(l.MaxMessageMB)...)
	if tracing.Enabled() {
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler()))
	}
	namespace, disableTLS := l.Namespace, l.DisableTLS
	if !disableTLS {
		dir := cmdutil.AppConfigDir(repoServerTLSDir)
		cert, generated, err := certs.Load(dir, "argocd-repo-server", reposerver.Hosts(namespace))
		if err != nil {
			return fmt.Errorf("repo server certificate: %w", err)
		}
		if generated {
			log.Info("No certificate in "+dir+": serving with a self-signed one", "hosts", reposerver.Hosts(namespace))
		}
		creds, err := reposerver.ServerOption(cert, l.TLS, l.ClientCAPath)
		if err != nil {
			return err
		}
		opts = append(opts, creds)
	}
	lis, err := net.Listen("tcp", l.Address)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(opts...)
	reposerver.Register(srv, r)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	log.Info("Repo server listening", "address", lis.Addr().String(), "tls", !disableTLS)
	return srv.Serve(lis)
}
