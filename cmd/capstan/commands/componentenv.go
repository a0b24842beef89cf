package commands

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Component flags take their values from the environment variables Argo
// CD's install manifests set from argocd-cmd-params-cm, under Argo CD's
// names, so those manifests' settings reach Capstan's components
// unchanged. A flag on the command line wins; an empty variable (the
// ConfigMap lacks the key) leaves the flag's default.
var (
	serverEnv = map[string]string{
		"insecure":               "ARGOCD_SERVER_INSECURE",
		"basehref":               "ARGOCD_SERVER_BASEHREF",
		"rootpath":               "ARGOCD_SERVER_ROOTPATH",
		"address":                "ARGOCD_SERVER_LISTEN_ADDRESS",
		"dex-server":             "ARGOCD_DEX_SERVER",
		"dex-server-plaintext":   "ARGOCD_DEX_SERVER_PLAINTEXT",
		"dex-server-strict-tls":  "ARGOCD_DEX_SERVER_STRICT_TLS",
		"metrics-address":        "ARGOCD_SERVER_METRICS_LISTEN_ADDRESS",
		"repo-server":            "ARGOCD_SERVER_REPO_SERVER",
		"repo-server-plaintext":  "ARGOCD_SERVER_REPO_SERVER_PLAINTEXT",
		"repo-server-strict-tls": "ARGOCD_SERVER_REPO_SERVER_STRICT_TLS",
	}
	repoServerEnv = map[string]string{
		"redis":            "REDIS_SERVER",
		"disable-tls":      "ARGOCD_REPO_SERVER_DISABLE_TLS",
		"parallelismlimit": "ARGOCD_REPO_SERVER_PARALLELISM_LIMIT",
		"address":          "ARGOCD_REPO_SERVER_LISTEN_ADDRESS",
		"metrics-address":  "ARGOCD_REPO_SERVER_METRICS_LISTEN_ADDRESS",
	}
	controllerEnv = map[string]string{
		"status-processors":      "ARGOCD_APPLICATION_CONTROLLER_STATUS_PROCESSORS",
		"operation-processors":   "ARGOCD_APPLICATION_CONTROLLER_OPERATION_PROCESSORS",
		"app-resync":             "ARGOCD_RECONCILIATION_TIMEOUT",
		"app-hard-resync":        "ARGOCD_HARD_RECONCILIATION_TIMEOUT",
		"repo-server":            "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER",
		"repo-server-plaintext":  "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_PLAINTEXT",
		"repo-server-strict-tls": "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_STRICT_TLS",
		"kube-api-qps":           "ARGOCD_K8S_CLIENT_QPS",
		"kube-api-burst":         "ARGOCD_K8S_CLIENT_BURST",
	}
)

// bindEnv makes cmd's flags named in vars read their variables before it
// runs (see above). A value the flag cannot take is an error naming the
// variable.
func bindEnv(cmd *cobra.Command, vars map[string]string) {
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		for name, env := range vars {
			fl := cmd.Flags().Lookup(name)
			value := os.Getenv(env)
			if fl == nil || fl.Changed || value == "" {
				continue
			}
			if err := fl.Value.Set(value); err != nil {
				return fmt.Errorf("%s=%q (for --%s): %w", env, value, name, err)
			}
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}
