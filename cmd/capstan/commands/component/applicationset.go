package component

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
	"github.com/capstan-cd/capstan/internal/repo"
)

type appSetFlags struct {
	namespace      string
	namespaces     []string
	policy         string
	policyOverride bool
	dryRun         bool
	newGlobbing    bool
	workers        int
	maxResources   int
	preservedAnn   []string
	preservedLbl   []string
	elect          bool
	metricsAddr    string
	metricsLabels  []string
	probeAddr      string
	qps            float32
	burst          int
	log            logFlags
	debug          bool
	progressive    bool
	githubMetrics  bool
	wq             wqFlags
	scmAllowed     []string
	scmEnabled     bool
	scmStrict      bool
	scmRootCA      string
}

// appSetEnv names the variables Argo CD's manifests set on the
// ApplicationSet controller from argocd-cmd-params-cm.
var appSetEnv = map[string]string{
	"repo-server":                      "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER",
	"repo-server-plaintext":            "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER_PLAINTEXT",
	"repo-server-strict-tls":           "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER_STRICT_TLS",
	"repo-server-ca-cert-path":         "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER_CA_CERT_PATH",
	"repo-server-client-cert-path":     "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER_CLIENT_CERT_PATH",
	"repo-server-client-cert-key-path": "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER_CLIENT_CERT_KEY_PATH",
	"repo-server-timeout-seconds":      "ARGOCD_APPLICATIONSET_CONTROLLER_REPO_SERVER_TIMEOUT_SECONDS",
	"policy":                           "ARGOCD_APPLICATIONSET_CONTROLLER_POLICY",
	"enable-policy-override":           "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_POLICY_OVERRIDE",
	"dry-run":                          "ARGOCD_APPLICATIONSET_CONTROLLER_DRY_RUN",
	"enable-new-git-file-globbing":     "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING",
	"concurrent-reconciliations":       "ARGOCD_APPLICATIONSET_CONTROLLER_CONCURRENT_RECONCILIATIONS",
	"applicationset-namespaces":        "ARGOCD_APPLICATIONSET_CONTROLLER_NAMESPACES",
	"preserved-annotations":            "ARGOCD_APPLICATIONSET_CONTROLLER_GLOBAL_PRESERVED_ANNOTATIONS",
	"preserved-labels":                 "ARGOCD_APPLICATIONSET_CONTROLLER_GLOBAL_PRESERVED_LABELS",
	"enable-leader-election":           "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_LEADER_ELECTION",
	"max-resources-status-count":       "ARGOCD_APPLICATIONSET_CONTROLLER_MAX_RESOURCES_STATUS_COUNT",
	"kube-api-qps":                     "ARGOCD_K8S_CLIENT_QPS",
	"kube-api-burst":                   "ARGOCD_K8S_CLIENT_BURST",
	"loglevel":                         "ARGOCD_APPLICATIONSET_CONTROLLER_LOGLEVEL",
	"logformat":                        "ARGOCD_APPLICATIONSET_CONTROLLER_LOGFORMAT",
	"debug":                            "ARGOCD_APPLICATIONSET_CONTROLLER_DEBUG",
	"enable-progressive-syncs":         "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_PROGRESSIVE_SYNCS",
	"enable-github-api-metrics":        "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_GITHUB_API_METRICS",
	"wq-bucket-size":                   "ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_BUCKET_SIZE",
	"wq-bucket-qps":                    "ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_BUCKET_QPS",
	"wq-cooldown":                      "ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_FAILURE_COOLDOWN_NS",
	"wq-basedelay":                     "ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_BASE_DELAY_NS",
	"wq-maxdelay":                      "ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_MAX_DELAY_NS",
	"wq-backoff-factor":                "ARGOCD_APPLICATIONSET_CONTROLLER_WORKQUEUE_BACKOFF_FACTOR",
	"allowed-scm-providers":            cmdutil.EnvAllowedSCMProviders,
	"enable-scm-providers":             cmdutil.EnvEnableSCMProviders,
	"token-ref-strict-mode":            cmdutil.EnvTokenRefStrictMode,
	"scm-root-ca-path":                 cmdutil.EnvSCMRootCAPath,
}

// envRequeueAfter is the default period of the git and
// clusterDecisionResource generators (applicationsetcontroller.requeue.after).
const envRequeueAfter = "ARGOCD_APPLICATIONSET_CONTROLLER_REQUEUE_AFTER"

// appSetNoEffect are the ApplicationSet controller's variables in noEffect.
var appSetNoEffect = []string{
	"ARGOCD_GIT_MODULES_ENABLED",
	"GRPC_ENABLE_TXT_SERVICE_CONFIG",
	"ARGOCD_APPLICATIONSET_CONTROLLER_WEBHOOK_PARALLELISM_LIMIT",
}

func (f *appSetFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.namespace, "namespace", "argocd", "control namespace: ApplicationSets, AppProjects and cluster Secrets")
	fl.StringSliceVar(&f.namespaces, "applicationset-namespaces", nil, "other namespaces (globs) whose ApplicationSets are reconciled")
	fl.StringVar(&f.policy, "policy", "", "what may be done to generated Applications: sync (default), create-only, create-update or create-delete")
	fl.BoolVar(&f.policyOverride, "enable-policy-override", true, "let an ApplicationSet's spec.syncPolicy.applicationsSync override --policy")
	fl.BoolVar(&f.dryRun, "dry-run", false, "write no Applications, only ApplicationSet status")
	fl.BoolVar(&f.newGlobbing, "enable-new-git-file-globbing", false, `in git file patterns, "*" stays within a directory and "**" crosses them`)
	fl.IntVar(&f.workers, "concurrent-reconciliations", 10, "ApplicationSets reconciled in parallel")
	fl.IntVar(&f.maxResources, "max-resources-status-count", 5000, "bound on status.resources (0: none)")
	fl.StringSliceVar(&f.preservedAnn, "preserved-annotations", nil, "annotations of generated Applications kept as found, for every ApplicationSet")
	fl.StringSliceVar(&f.preservedLbl, "preserved-labels", nil, "labels of generated Applications kept as found, for every ApplicationSet")
	fl.BoolVar(&f.elect, "enable-leader-election", false, "wait for the controller's Lease, so standby replicas can take over")
	fl.StringVar(&f.metricsAddr, "metrics-addr", ":8080", "address of /metrics")
	fl.StringSliceVar(&f.metricsLabels, "metrics-applicationset-labels", nil, "ApplicationSet labels argocd_appset_labels exports, each as label_<name> (default: no argocd_appset_labels)")
	fl.StringVar(&f.probeAddr, "probe-addr", ":8081", "address of /healthz and /readyz")
	fl.Float32Var(&f.qps, "kube-api-qps", 50, "requests per second to the Kubernetes API server")
	fl.IntVar(&f.burst, "kube-api-burst", 100, "request burst to the Kubernetes API server")
	fl.BoolVar(&f.debug, "debug", false, "log at debug level, whatever --loglevel says")
	fl.BoolVar(&f.progressive, "enable-progressive-syncs", false, "run ApplicationSets' RollingSync strategy: sync generated Applications step by step")
	fl.StringSliceVar(&f.scmAllowed, "allowed-scm-providers", nil, "API addresses SCM provider and pull request generators may name (default: any)")
	fl.BoolVar(&f.scmEnabled, "enable-scm-providers", true, "run the SCM provider and pull request generators")
	fl.BoolVar(&f.scmStrict, "token-ref-strict-mode", false, "read a generator's tokenRef only from Secrets labelled argocd.argoproj.io/secret-type=scm-creds")
	fl.StringVar(&f.scmRootCA, "scm-root-ca-path", "", "PEM file of extra root CAs trusted when reaching SCM providers")
	f.wq.add(fl)
	fl.BoolVar(&f.githubMetrics, "enable-github-api-metrics", false, "count the GitHub API calls of the SCM provider and pull request generators in argocd_github_api_*")
	f.log.add(cmd)
}

// options checks the flags and turns them into the controller's options.
func (f *appSetFlags) options(cfg *rest.Config, git repo.GitLister, log *slog.Logger) (applicationset.Options, error) {
	policy := v1alpha1.ApplicationsSyncPolicy(f.policy)
	switch policy {
	case "", v1alpha1.ApplicationsSyncPolicySync, v1alpha1.ApplicationsSyncPolicyCreateOnly,
		v1alpha1.ApplicationsSyncPolicyCreateUpdate, v1alpha1.ApplicationsSyncPolicyCreateDelete:
	default:
		return applicationset.Options{}, fmt.Errorf("invalid policy %q: want sync, create-only, create-update or create-delete", f.policy)
	}
	requeue, err := requeueAfter()
	if err != nil {
		return applicationset.Options{}, err
	}
	return applicationset.Options{
		RequeueAfter: requeue,
		SCM:          applicationset.SCMPolicy{Disabled: !f.scmEnabled, Allowed: f.scmAllowed, TokenRefStrict: f.scmStrict, RootCAPath: f.scmRootCA},
		Config:       cfg, Namespace: f.namespace, Namespaces: f.namespaces, Git: git,
		Policy: policy, PolicyOverride: &f.policyOverride, DryRun: f.dryRun, PathAwareGlobs: f.newGlobbing,
		PreservedAnnotations: f.preservedAnn, PreservedLabels: f.preservedLbl,
		Workers: f.workers, MaxResourcesStatus: f.maxResources, LeaderElection: f.elect,
		MetricsAddr: f.metricsAddr, ProbeAddr: f.probeAddr, MetricsLabels: f.metricsLabels, Log: log, ProgressiveSyncs: f.progressive,
		GitHubAPIMetrics: f.githubMetrics, Workqueue: f.wq.limit(),
	}, nil
}

func newApplicationSetControllerCommand() *cobra.Command {
	f := &appSetFlags{}
	rc := &cmdutil.RepoClientFlags{}
	cmd := &cobra.Command{
		Use:     "applicationset-controller",
		Example: "  capstan applicationset-controller --repo-server argocd-repo-server:8081\n  capstan applicationset-controller --policy create-update",
		Short:   "Generate Applications from ApplicationSets, reading Git through a repo server",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := kubeConfig(f.qps, f.burst)
			if err != nil {
				return err
			}
			client, err := rc.Dial()
			if err != nil {
				return err
			}
			defer client.Close()
			if f.debug {
				f.log.level = "debug"
			}
			log, err := f.log.logger()
			if err != nil {
				return err
			}
			opts, err := f.options(cfg, client, log)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return applicationset.Run(ctx, opts)
		},
	}
	f.add(cmd)
	// Argo CD's controller names the repo server --argocd-repo-server.
	rc.Add(cmd, "reposerver/tls")
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "argocd-repo-server" {
			name = "repo-server"
		}
		return pflag.NormalizedName(name)
	})
	bindEnv(cmd, appSetEnv)
	readsEnv(cmd, envRequeueAfter)
	readsEnv(cmd, kubehttp.Env...)
	acceptEnv(cmd, appSetNoEffect...)
	return cmd
}

// requeueAfter reads envRequeueAfter: a duration from one second to a
// year, as Argo CD bounds it (unset: the controller's default).
func requeueAfter() (time.Duration, error) {
	v := os.Getenv(envRequeueAfter)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > 8760*time.Hour {
		return 0, fmt.Errorf("%s=%q: want a duration from 1s to 8760h", envRequeueAfter, v)
	}
	return d, nil
}
