package component

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/settings"
)

type notificationsFlags struct {
	namespace   string
	appNS       []string
	processors  int
	selector    string
	configMap   string
	secret      string
	selfService bool
	log         logFlags
	metrics     metricsFlags
}

// notificationsEnv names the variables Argo CD's manifests set on the
// notifications controller from argocd-cmd-params-cm.
var notificationsEnv = map[string]string{
	"processors-count":                  "ARGOCD_NOTIFICATION_CONTROLLER_PROCESSORS_COUNT",
	"repo-server":                       "ARGOCD_NOTIFICATION_CONTROLLER_REPO_SERVER",
	"application-namespaces":            "ARGOCD_APPLICATION_NAMESPACES",
	"self-service-notification-enabled": "ARGOCD_NOTIFICATION_CONTROLLER_SELF_SERVICE_NOTIFICATION_ENABLED",
	"repo-server-plaintext":             "ARGOCD_NOTIFICATION_CONTROLLER_REPO_SERVER_PLAINTEXT",
	"repo-server-ca-cert-path":          "ARGOCD_NOTIFICATION_CONTROLLER_REPO_SERVER_CA_CERT_PATH",
	"repo-server-client-cert-path":      "ARGOCD_NOTIFICATION_CONTROLLER_REPO_SERVER_CLIENT_CERT_PATH",
	"repo-server-client-cert-key-path":  "ARGOCD_NOTIFICATION_CONTROLLER_REPO_SERVER_CLIENT_CERT_KEY_PATH",
	"loglevel":                          "ARGOCD_NOTIFICATIONS_CONTROLLER_LOGLEVEL",
	"logformat":                         "ARGOCD_NOTIFICATIONS_CONTROLLER_LOGFORMAT",
}

func (f *notificationsFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.namespace, "namespace", "argocd", "control namespace: Applications, AppProjects and the notification settings")
	fl.StringSliceVar(&f.appNS, "application-namespaces", nil, "other namespaces (globs) whose Applications are notified about")
	fl.IntVar(&f.processors, "processors-count", 1, "Applications processed in parallel")
	fl.StringVar(&f.selector, "app-label-selector", "", "notify only about Applications with these labels")
	fl.StringVar(&f.configMap, "config-map-name", settings.NotificationsConfigMap, "ConfigMap of triggers, templates and services")
	fl.StringVar(&f.secret, "secret-name", settings.NotificationsSecret, "Secret whose keys services name as $key")
	fl.BoolVar(&f.selfService, "self-service-notification-enabled", false, "also read the notification settings of Applications' own namespaces, for their Applications only")
	f.log.add(cmd)
	f.metrics.add(cmd, 9001)
}

func newNotificationsControllerCommand() *cobra.Command {
	f := &notificationsFlags{}
	rc := &cmdutil.RepoClientFlags{}
	cmd := &cobra.Command{
		Use:     "notifications-controller",
		Aliases: []string{"notifications"},
		Example: "  capstan notifications-controller --repo-server argocd-repo-server:8081",
		Short:   "Send notifications about Applications as argocd-notifications-cm configures them",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := f.log.logger()
			if err != nil {
				return err
			}
			cfg, err := ctrlconfig.GetConfig()
			if err != nil {
				return err
			}
			client, err := rc.Dial()
			if err != nil {
				return err
			}
			defer client.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			m := notifications.NewMetrics()
			f.metrics.serveHandler(ctx, log, m.Handler())
			return notifications.Run(ctx, notifications.Options{
				Config: cfg, Namespace: f.namespace, ApplicationNamespaces: f.appNS,
				ConfigMapName: f.configMap, SecretName: f.secret, AppLabelSelector: f.selector,
				Commits: client, Processors: f.processors, Metrics: m, Log: log, SelfService: f.selfService,
			})
		},
	}
	f.add(cmd)
	// Argo CD's controller names the repo server --argocd-repo-server.
	rc.Add(cmd, "reposerver/tls")
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		switch name {
		case "argocd-repo-server", "argocd-repo-server-plaintext", "argocd-repo-server-strict-tls":
			name = name[len("argocd-"):]
		}
		return pflag.NormalizedName(name)
	})
	bindEnv(cmd, notificationsEnv)
	return cmd
}
