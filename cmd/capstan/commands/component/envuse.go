package component

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/kube/kubehttp"
)

// directEnv says what the variables components read themselves, rather
// than through a flag bound by bindEnv, do.
var directEnv = map[string]string{
	kubehttp.EnvMaxIdleConnections:             "the idle connections its Kubernetes clients keep per host",
	kubehttp.EnvTCPTimeout:                     "how long its Kubernetes clients may take to connect",
	kubehttp.EnvTCPKeepAlive:                   "the TCP keep-alive period of its Kubernetes clients' connections",
	kubehttp.EnvTLSHandshakeTimeout:            "how long its Kubernetes clients' TLS handshakes may take",
	kubehttp.EnvTCPIdleTimeout:                 "how long its Kubernetes clients keep an idle connection",
	kubehttp.EnvRetryMax:                       "how many times its Kubernetes clients send again a request that could not be sent or was answered 429 or 5xx",
	kubehttp.EnvRetryBaseBackoff:               "the first wait, in milliseconds, before such a request is sent again (doubled each time, at most 10 s)",
	envKubeQPS:                                 "the requests per second its Kubernetes clients may send",
	envKubeBurst:                               "the burst of requests its Kubernetes clients may send",
	envGRPCTimeHistogram:                       "true serves the grpc_server_handling_seconds histogram",
	envRequeueAfter:                            "how often every ApplicationSet is generated again",
	envLogTimestamp:                            "the layout of the time in its log lines",
	envRedisKeyPrefix:                          "a prefix for the manifest cache's Redis keys, so installs can share one Redis",
	"ARGOCD_APPLICATION_NAMESPACES":            "the default of --application-namespaces: more namespaces whose Applications it reconciles",
	"ARGOCD_CONTROLLER_REPLICAS":               "the default of --replicas: how many controller replicas share the clusters",
	"ARGOCD_CONTROLLER_SHARD":                  "the default of --shard: this replica's shard (else from its StatefulSet ordinal)",
	"ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS": "the default of --plugin-tar-exclude: repository paths not sent to config management plugins",
	cmdutil.EnvAllowedSCMProviders:             "the SCM provider URLs an ApplicationSet preview may reach",
	cmdutil.EnvEnableSCMProviders:              "false refuses the SCM provider and pull request generators in previews",
	cmdutil.EnvTokenRefStrictMode:              "a generator's tokenRef must name a Secret labelled for ApplicationSets",
	cmdutil.EnvSCMRootCAPath:                   "the CA certificates SCM providers are verified with",
}

// EnvUse says what cmd, a component's command, does with variable, one of
// Argo CD's argocd-cmd-params-cm variables it acts on: the flag it sets
// (with the flag's help and default) or, for one read directly, what it
// tunes. "" when cmd does not act on it.
func EnvUse(cmd *cobra.Command, variable string) string {
	var use string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if use == "" && slices.Contains(f.Annotations[EnvAnnotation], variable) {
			use = fmt.Sprintf("sets `--%s` (default `%s`): %s", f.Name, f.DefValue, f.Usage)
		}
	})
	if use != "" {
		return use
	}
	return directEnv[variable]
}
