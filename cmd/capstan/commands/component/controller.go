package component

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
)

type controllerFlags struct {
	namespace   string
	workers     int
	opWorkers   int
	resync      time.Duration
	jitter      time.Duration
	hardResync  time.Duration
	repoPoll    time.Duration
	qps         float32
	burst       int
	shard       int
	replicas    int
	sharding    string
	elect       bool
	crds        bool
	metrics     int
	metricsHost string
	metricsOpts metrics.Options
	appNS       []string
	hydrator    bool
	// signingKey and signingPass are the hydrator's commit signing key
	// file and its passphrase file.
	signingKey, signingPass string
	syncTimeout             int // seconds, as Argo CD's
	waveDelay               int
	writeParallelism        int
	hydrationProcessors     int
	repoErrorGrace          int
	jqTimeout               time.Duration
	selfHeal                selfHealFlags
	log                     logFlags
	// tracing is the standalone controller's OTLP flags; capstan run has
	// its own for the whole process.
	tracing *otlpFlags
}

func (f *controllerFlags) add(cmd *cobra.Command) {
	f.log.add(cmd)
	cmd.Flags().StringVar(&f.namespace, "namespace", "argocd", "control namespace holding Applications, AppProjects and settings")
	cmd.Flags().IntVar(&f.workers, "status-processors", 20, "Applications reconciled in parallel")
	cmd.Flags().IntVar(&f.opWorkers, "operation-processors", 10, "syncs run in parallel (within the status processors)")
	cmd.Flags().DurationVar(&f.resync, "app-resync", 120*time.Second, "periodic refresh of every Application")
	cmd.Flags().DurationVar(&f.jitter, "app-resync-jitter", 60*time.Second, "up to this much more, at random, before each periodic refresh, to spread them out (0: none)")
	cmd.Flags().DurationVar(&f.hardResync, "app-hard-resync", 0, "periodic hard refresh of every Application, bypassing the manifest cache (0: never)")
	cmd.Flags().DurationVar(&f.repoPoll, "repo-poll-interval", 30*time.Second, "how often each followed repository revision is checked for new commits (once per repository, not per Application)")
	cmd.Flags().Float32Var(&f.qps, "kube-api-qps", 500, "requests per second to each Kubernetes API server")
	cmd.Flags().IntVar(&f.burst, "kube-api-burst", 1000, "request burst to each Kubernetes API server")
	cmd.Flags().IntVar(&f.replicas, "replicas", envInt("ARGOCD_CONTROLLER_REPLICAS", 1), "controller replicas sharing the destination clusters (env ARGOCD_CONTROLLER_REPLICAS)")
	cmd.Flags().StringVar(&f.sharding, "sharding-method", string(cluster.ShardingLegacy), "how the destination clusters are spread over the replicas: legacy, round-robin or consistent-hashing")
	cmd.Flags().IntVar(&f.shard, "shard", -1, "this replica's shard; default: env ARGOCD_CONTROLLER_SHARD, else the StatefulSet ordinal ending the host name, else 0")
	cmd.Flags().StringSliceVar(&f.appNS, "application-namespaces", envList("ARGOCD_APPLICATION_NAMESPACES", ","), "other namespaces (globs) whose Applications are reconciled; their projects must list them in sourceNamespaces")
	cmd.Flags().IntVar(&f.metrics, "metrics-port", 8082, "serve Prometheus metrics on this port (0: off)")
	cmd.Flags().StringVar(&f.metricsHost, "metrics-address", "", "address to serve metrics on (default: every address)")
	cmd.Flags().StringSliceVar(&f.metricsOpts.AppLabels, "metrics-application-labels", nil, "Application labels argocd_app_labels exports, each as label_<name> (default: no argocd_app_labels)")
	cmd.Flags().StringSliceVar(&f.metricsOpts.AppConditions, "metrics-application-conditions", nil, "condition types argocd_app_condition reports (default: every type)")
	cmd.Flags().StringSliceVar(&f.metricsOpts.ClusterLabels, "metrics-cluster-labels", nil, "cluster Secret labels argocd_cluster_labels exports, each as label_<name> (default: no argocd_cluster_labels)")
	cmd.Flags().BoolVar(&f.elect, "leader-elect", true, "wait for a Lease (one per shard) so standby replicas can take over")
	cmd.Flags().StringVar(&f.signingKey, "commit-signing-key-path", "", "ASCII-armored OpenPGP private key that signs the source hydrator's commits (argocd-cmd-params-cm commitserver.signing.key.path); default: unsigned")
	cmd.Flags().StringVar(&f.signingPass, "commit-signing-key-passphrase-file", "", "file holding that key's passphrase (commitserver.signing.key.passphrase.file)")
	cmd.Flags().BoolVar(&f.hydrator, "hydrator-enabled", false, "run the source hydrator: push each spec.sourceHydrator's rendered dry source to its hydrated branch (argocd-cmd-params-cm hydrator.enabled)")
	cmd.Flags().IntVar(&f.syncTimeout, "sync-timeout", 0, "seconds after which a sync, counted across its retries, is terminated (0: no timeout)")
	cmd.Flags().IntVar(&f.repoErrorGrace, "repo-error-grace-period-seconds", 180, "seconds a failure to render the sources of an Application that compared fine stays hidden, its last comparison standing (a refresh shows it)")
	cmd.Flags().IntVar(&f.hydrationProcessors, "hydration-processors", controller.DefaultHydrationProcessors, "Applications the source hydrator renders and pushes at once")
	cmd.Flags().IntVar(&f.writeParallelism, "kubectl-parallelism-limit", 20, "objects all syncs apply or delete at once; the others wait their turn (0: no limit)")
	cmd.Flags().IntVar(&f.waveDelay, "sync-wave-delay", 0, "seconds to pause between two sync waves, for other controllers to act (Argo CD waits 2)")
	cmd.Flags().DurationVar(&f.jqTimeout, "ignore-normalizer-jq-execution-timeout-seconds", time.Second, "how long each jq path expression of ignoreDifferences or ignoreResourceUpdates may run before the comparison fails (a duration, despite the name)")
	f.selfHeal.add(cmd)
	cmd.Flags().BoolVar(&f.crds, "install-crds", true, "install or upgrade the Application and AppProject CRDs at start (when allowed); otherwise wait for them")
}

// shardOf is the --shard flag, or Argo CD's fallbacks: the
// ARGOCD_CONTROLLER_SHARD variable, then the ordinal a StatefulSet puts at
// the end of the pod's host name (argocd-application-controller-2 → 2).
func (f *controllerFlags) shardOf() (int, error) {
	if f.shard >= 0 || f.replicas <= 1 {
		return max(f.shard, 0), nil
	}
	if v := os.Getenv("ARGOCD_CONTROLLER_SHARD"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("ARGOCD_CONTROLLER_SHARD is %q, want a number", v)
		}
		return n, nil
	}
	host, _ := os.Hostname()
	if i := strings.LastIndex(host, "-"); i >= 0 {
		if n, err := strconv.Atoi(host[i+1:]); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("with %d replicas, set --shard or ARGOCD_CONTROLLER_SHARD, or run in a StatefulSet (host name %q has no ordinal)", f.replicas, host)
}

// metricsAddr is where the controller serves metrics ("": off).
func (f *controllerFlags) metricsAddr() string {
	if f.metrics <= 0 {
		return ""
	}
	return net.JoinHostPort(f.metricsHost, strconv.Itoa(f.metrics))
}

// envList is the environment variable name split at sep, blanks dropped.
func envList(name, sep string) []string {
	var out []string
	for _, v := range strings.Split(os.Getenv(name), sep) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// The variables Argo CD's components take their Kubernetes clients' rate from.
const (
	envKubeQPS   = "ARGOCD_K8S_CLIENT_QPS"
	envKubeBurst = "ARGOCD_K8S_CLIENT_BURST"
)

func envFloat(name string, def float64) float64 {
	if n, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return n
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func newControllerCommand() *cobra.Command {
	f := &controllerFlags{}
	rc := &cmdutil.RepoClientFlags{}
	cmd := &cobra.Command{
		Use:     "controller",
		Example: "  capstan controller --repo-server argocd-repo-server:8081\n  capstan controller --replicas 2 --shard 1 --operation-processors 20",
		Short:   "Reconcile Applications, rendering through a repo server",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log, err := f.log.logger()
			if err != nil {
				return err
			}
			// Before the repo server's client, which traces its calls then.
			flush, err := f.tracing.start(ctx, log)
			if err != nil {
				return err
			}
			defer flush()
			client, err := rc.Dial()
			if err != nil {
				return err
			}
			defer client.Close()
			return runController(ctx, f, client, nil, nil)
		},
	}
	f.add(cmd)
	f.tracing = &otlpFlags{}
	f.tracing.add(cmd, "argocd-application-controller")
	rc.Add(cmd, "controller/tls")
	bindEnv(cmd, controllerEnv)
	readsEnv(cmd, "ARGOCD_APPLICATION_NAMESPACES", "ARGOCD_CONTROLLER_REPLICAS", "ARGOCD_CONTROLLER_SHARD") // flags' defaults
	readsEnv(cmd, kubehttp.Env...)
	acceptEnv(cmd, controllerNoEffect...)
	return cmd
}

// runController runs the controller; changes, if set, names repositories
// that Git webhooks reported pushed.
// runController runs the controller; shared, if set, is the process's
// cache of the control cluster (capstan run).
func runController(ctx context.Context, f *controllerFlags, r repo.Renderer, changes <-chan repo.Change, shared *kube.SharedCache) error {
	cfg, tuning, err := kubeConfig(f.qps, f.burst)
	if err != nil {
		return err
	}
	shard, err := f.shardOf()
	if err != nil {
		return err
	}
	log, err := f.log.logger()
	if err != nil {
		return err
	}
	sharding, err := cluster.ParseSharding(f.sharding)
	if err != nil {
		return err
	}
	var hydrator *controller.HydratorOptions
	if f.hydrator {
		hydrator = &controller.HydratorOptions{Processors: f.hydrationProcessors}
		if f.hydrationProcessors < 1 {
			log.Warn("hydration needs at least one processor; using 1", "hydration-processors", f.hydrationProcessors)
			hydrator.Processors = 1 // as Argo CD clamps it
		}
		if f.signingKey != "" {
			// Fails at start when the key cannot sign, as Argo CD's commit
			// server does: no hydrated commit is pushed unsigned.
			if hydrator.Signing, err = git.ImportSigningKey(ctx, filepath.Join(os.TempDir(), "capstan-hydrator-gnupg"), f.signingKey, f.signingPass); err != nil {
				return fmt.Errorf("--commit-signing-key-path: %w", err)
			}
		}
	} else if f.signingKey != "" {
		log.Warn("a commit signing key is set, but the source hydrator is off (hydrator.enabled)")
	}
	return controller.Run(ctx, controller.Options{
		Config: cfg, KubeTransport: tuning, Namespace: f.namespace, Renderer: r, Workers: f.workers, OperationWorkers: f.opWorkers, Resync: f.resync, ResyncJitter: f.jitter,
		SyncTimeout: time.Duration(f.syncTimeout) * time.Second, SyncWaveDelay: time.Duration(f.waveDelay) * time.Second, WriteParallelism: f.writeParallelism, RepoErrorGracePeriod: time.Duration(f.repoErrorGrace) * time.Second, SelfHeal: f.selfHeal.backoff(), IgnoreJQTimeout: f.jqTimeout, HardResync: f.hardResync, RepoPoll: f.repoPoll,
		Replicas: f.replicas, Shard: shard, Sharding: sharding, LeaderElection: f.elect, MetricsAddr: f.metricsAddr(), Metrics: f.metricsOpts,
		ApplicationNamespaces: f.appNS, RepoChanges: changes, InstallCRDs: f.crds, Hydrator: hydrator,
		Log: log, Cache: shared,
	})
}

func newRunCommand() *cobra.Command {
	f := &controllerFlags{}
	sf := &serverFlags{}
	uf := &imageUpdaterFlags{}
	var repoListen string
	rf := &repoFlags{}
	var withUpdater, withAppSets, withNotifications bool
	tr := &otlpFlags{}
	cmd := &cobra.Command{
		Use:     "run",
		Example: "  capstan run                        # controller, API server on :8080 (TLS), repo server\n  capstan run --server-insecure --redis localhost:6379",
		Short:   "Run every component in one process: controller, API server, repo server in-process",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log, err := f.log.logger()
			if err != nil {
				return err
			}
			flush, err := tr.start(ctx, log)
			if err != nil {
				return err
			}
			defer flush()
			svc, closeCache, err := newRepoService(ctx, f.namespace, rf)
			if err != nil {
				return err
			}
			defer closeCache()
			cfg, err := ctrlconfig.GetConfig()
			if err != nil {
				return err
			}
			// The components read the control cluster from one cache, so
			// each Application is decoded and held once.
			shared, err := kube.NewSharedCache(cfg, kube.SharedCacheOptions{Namespace: f.namespace, AllNamespaces: len(f.appNS) > 0})
			if err != nil {
				return err
			}
			g, ctx := errgroup.WithContext(ctx)
			g.Go(func() error { return shared.Start(ctx) })
			// Git webhooks reach the controller directly: one repository
			// check instead of an annotation on every Application.
			changes := make(chan repo.Change, 64)
			g.Go(func() error { return runController(ctx, f, svc, changes, shared) })
			sf.appNS, sf.hydrator = f.appNS, f.hydrator
			g.Go(func() error {
				return runServer(ctx, sf, f.namespace, log, svc, shared, func(c repo.Change) {
					select {
					case changes <- c:
					default: // a check is already pending; the poll catches up anyway
					}
				})
			})
			if repoListen != "" {
				g.Go(func() error {
					return serveRepo(ctx, log, repoListener{Address: repoListen, Namespace: f.namespace}, svc)
				})
			}
			if withAppSets {
				opts, err := runAppSetOptions()
				if err != nil {
					return err
				}
				opts.Config, opts.Namespace, opts.Namespaces, opts.Git, opts.Log, opts.Cache = cfg, f.namespace, f.appNS, svc, log, shared
				g.Go(func() error { return applicationset.Run(ctx, opts) })
			}
			if withNotifications {
				opts := notifications.Options{Config: cfg, Namespace: f.namespace, ApplicationNamespaces: f.appNS, Commits: svc, Log: log, Cache: shared,
					SelfService: os.Getenv(notificationsEnv["self-service-notification-enabled"]) == "true"}
				g.Go(func() error { return notifications.Run(ctx, opts) })
			}
			if withUpdater {
				uf.namespace = f.namespace
				// The updater's commits reach the controller at once, as a
				// Git webhook would.
				g.Go(func() error {
					return runImageUpdater(ctx, uf, cfg, log, func(url string) {
						select {
						case changes <- repo.Change{URL: url}:
						default:
						}
					})
				})
			}
			return g.Wait()
		},
	}
	f.add(cmd)
	tr.add(cmd, "capstan")
	sf.add(cmd, "server-")
	rf.add(cmd, "capstan")
	cmd.Flags().StringVar(&repoListen, "repo-server-listen", "", "also serve the repo server over gRPC with TLS on this address (see capstan repo-server --disable-tls)")
	cmd.Flags().BoolVar(&withAppSets, "applicationset-controller", true, "also run the ApplicationSet controller")
	cmd.Flags().BoolVar(&withNotifications, "notifications-controller", true, "also run the notifications controller (argocd-notifications-cm)")
	cmd.Flags().BoolVar(&withUpdater, "image-updater", true, "also run the image updater (Argo CD Image Updater's annotations)")
	uf.add(cmd, "image-updater-", false)
	return cmd
}

// runAppSetOptions are the ApplicationSet controller's settings capstan run
// takes from the environment the controller's Deployment would have:
// progressive syncs, the default requeue period and the SCM policy.
func runAppSetOptions() (applicationset.Options, error) {
	var opts applicationset.Options
	if v := os.Getenv(appSetEnv["enable-progressive-syncs"]); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return opts, fmt.Errorf("%s=%q: want true or false", appSetEnv["enable-progressive-syncs"], v)
		}
		opts.ProgressiveSyncs = b
	}
	var err error
	if opts.RequeueAfter, err = requeueAfter(); err != nil {
		return opts, err
	}
	opts.SCM, err = cmdutil.SCMPolicyFromEnv()
	return opts, err
}
