package component

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Component flags take their values from the environment variables Argo
// CD's install manifests set from argocd-cmd-params-cm, under Argo CD's
// names, so those manifests' settings reach Capstan's components
// unchanged. A flag on the command line wins; an empty variable (the
// ConfigMap lacks the key) leaves the flag's default.
var (
	serverEnv = map[string]string{
		"insecure":                         "ARGOCD_SERVER_INSECURE",
		"hydrator-enabled":                 "ARGOCD_HYDRATOR_ENABLED",
		"otlp-address":                     "ARGOCD_SERVER_OTLP_ADDRESS",
		"otlp-insecure":                    "ARGOCD_SERVER_OTLP_INSECURE",
		"otlp-headers":                     "ARGOCD_SERVER_OTLP_HEADERS",
		"otlp-attrs":                       "ARGOCD_SERVER_OTLP_ATTRS",
		"otlp-sample-ratio":                "ARGOCD_SERVER_OTLP_SAMPLE_RATIO",
		"tlsminversion":                    "ARGOCD_TLS_MIN_VERSION",
		"tlsmaxversion":                    "ARGOCD_TLS_MAX_VERSION",
		"tlsciphers":                       "ARGOCD_TLS_CIPHERS",
		"tlscurvepreferences":              "ARGOCD_TLS_CURVE_PREFERENCES",
		"application-namespaces":           "ARGOCD_APPLICATION_NAMESPACES",
		"basehref":                         "ARGOCD_SERVER_BASEHREF",
		"rootpath":                         "ARGOCD_SERVER_ROOTPATH",
		"address":                          "ARGOCD_SERVER_LISTEN_ADDRESS",
		"dex-server":                       "ARGOCD_SERVER_DEX_SERVER",
		"dex-server-plaintext":             "ARGOCD_SERVER_DEX_SERVER_PLAINTEXT",
		"dex-server-strict-tls":            "ARGOCD_SERVER_DEX_SERVER_STRICT_TLS",
		"metrics-address":                  "ARGOCD_SERVER_METRICS_LISTEN_ADDRESS",
		"repo-server":                      "ARGOCD_SERVER_REPO_SERVER",
		"repo-server-plaintext":            "ARGOCD_SERVER_REPO_SERVER_PLAINTEXT",
		"repo-server-strict-tls":           "ARGOCD_SERVER_REPO_SERVER_STRICT_TLS",
		"repo-server-ca-cert-path":         "ARGOCD_SERVER_REPO_SERVER_CA_CERT_PATH",
		"repo-server-client-cert-path":     "ARGOCD_SERVER_REPO_SERVER_CLIENT_CERT_PATH",
		"repo-server-client-cert-key-path": "ARGOCD_SERVER_REPO_SERVER_CLIENT_CERT_KEY_PATH",
		"repo-server-timeout-seconds":      "ARGOCD_SERVER_REPO_SERVER_TIMEOUT_SECONDS",
		"loglevel":                         "ARGOCD_SERVER_LOG_LEVEL",
		"logformat":                        "ARGOCD_SERVER_LOGFORMAT",
		"x-frame-options":                  "ARGOCD_SERVER_X_FRAME_OPTIONS",
		"content-security-policy":          "ARGOCD_SERVER_CONTENT_SECURITY_POLICY",
		"sync-with-replace-allowed":        "ARGOCD_SYNC_WITH_REPLACE_ALLOWED",
		"disable-auth":                     "ARGOCD_SERVER_DISABLE_AUTH",
		"enable-gzip":                      "ARGOCD_SERVER_ENABLE_GZIP",
		"staticassets":                     "ARGOCD_SERVER_STATIC_ASSETS",
		"webhook-parallelism-limit":        "ARGOCD_SERVER_WEBHOOK_PARALLELISM_LIMIT",
		"webhook-refresh-workers":          "ARGOCD_SERVER_WEBHOOK_REFRESH_WORKERS",
		"enable-proxy-extension":           "ARGOCD_SERVER_ENABLE_PROXY_EXTENSION",
		"disable-swagger-ui":               "ARGOCD_SERVER_DISABLE_SWAGGER_UI",
		"api-content-types":                "ARGOCD_API_CONTENT_TYPES",
		"max-cookie-number":                "ARGOCD_MAX_COOKIE_NUMBER",
	}
	// serverNoEffect are the API server's variables in noEffect.
	serverNoEffect = []string{
		"REDIS_SENTINEL_HOSTS", "REDIS_SENTINEL_MASTER", "ARGOCD_REDIS_KEY_PREFIX",

		"REDIS_COMPRESSION", "REDISDB", "REDIS_SERVER", "ARGOCD_APP_STATE_CACHE_EXPIRATION",
		"ARGOCD_SERVER_CONNECTION_STATUS_CACHE_EXPIRATION", "ARGOCD_DEFAULT_CACHE_EXPIRATION", "ARGOCD_SERVER_OIDC_CACHE_EXPIRATION",
		"ARGOCD_SERVER_GLOB_CACHE_SIZE",
		"GRPC_ENABLE_TXT_SERVICE_CONFIG",

		"ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_GITHUB_API_METRICS", "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING",
	}
	repoServerEnv = map[string]string{
		"redis":                                   "REDIS_SERVER",
		"disable-tls":                             "ARGOCD_REPO_SERVER_DISABLE_TLS",
		"parallelismlimit":                        "ARGOCD_REPO_SERVER_PARALLELISM_LIMIT",
		"git-request-timeout":                     "ARGOCD_GIT_REQUEST_TIMEOUT",
		"include-hidden-directories":              "ARGOCD_REPO_SERVER_INCLUDE_HIDDEN_DIRECTORIES",
		"oci-manifest-max-extracted-size":         "ARGOCD_REPO_SERVER_OCI_MANIFEST_MAX_EXTRACTED_SIZE",
		"disable-oci-manifest-max-extracted-size": "ARGOCD_REPO_SERVER_DISABLE_OCI_MANIFEST_MAX_EXTRACTED_SIZE",
		"oci-layer-media-types":                   "ARGOCD_REPO_SERVER_OCI_LAYER_MEDIA_TYPES",
		"git-submodules":                          "ARGOCD_GIT_MODULES_ENABLED",
		"address":                                 "ARGOCD_REPO_SERVER_LISTEN_ADDRESS",
		"metrics-address":                         "ARGOCD_REPO_SERVER_LISTEN_METRICS_ADDRESS", // as Argo CD's manifests name it
		"loglevel":                                "ARGOCD_REPO_SERVER_LOGLEVEL",
		"logformat":                               "ARGOCD_REPO_SERVER_LOGFORMAT",
		"redisdb":                                 "REDISDB",
		"redis-compress":                          "REDIS_COMPRESSION",
		"sentinel":                                "REDIS_SENTINEL_HOSTS",
		"sentinelmaster":                          "REDIS_SENTINEL_MASTER",
		"client-ca-path":                          "ARGOCD_REPO_SERVER_CLIENT_CA_PATH",
		"otlp-address":                            "ARGOCD_REPO_SERVER_OTLP_ADDRESS",
		"otlp-insecure":                           "ARGOCD_REPO_SERVER_OTLP_INSECURE",
		"otlp-headers":                            "ARGOCD_REPO_SERVER_OTLP_HEADERS",
		"otlp-attrs":                              "ARGOCD_REPO_SERVER_OTLP_ATTRS",
		"otlp-sample-ratio":                       "ARGOCD_REPO_SERVER_OTLP_SAMPLE_RATIO",
		"tlsminversion":                           "ARGOCD_TLS_MIN_VERSION",
		"tlsmaxversion":                           "ARGOCD_TLS_MAX_VERSION",
		"tlsciphers":                              "ARGOCD_TLS_CIPHERS",
		"tlscurvepreferences":                     "ARGOCD_TLS_CURVE_PREFERENCES",
		"default-cache-expiration":                "ARGOCD_DEFAULT_CACHE_EXPIRATION",
		"plugin-tar-exclude":                      "ARGOCD_REPO_SERVER_PLUGIN_TAR_EXCLUSIONS",
		"helm-manifest-max-extracted-size":        "ARGOCD_REPO_SERVER_HELM_MANIFEST_MAX_EXTRACTED_SIZE",
		"disable-helm-manifest-max-extracted-size": "ARGOCD_REPO_SERVER_DISABLE_HELM_MANIFEST_MAX_EXTRACTED_SIZE",
		"max-combined-directory-manifests-size":    "ARGOCD_REPO_SERVER_MAX_COMBINED_DIRECTORY_MANIFESTS_SIZE",
		"helm-user-agent":                          "ARGOCD_HELM_USER_AGENT",
		"git-lsremote-parallelism-limit":           "ARGOCD_GIT_LS_REMOTE_PARALLELISM_LIMIT",
		"streamed-manifest-max-extracted-size":     "ARGOCD_REPO_SERVER_STREAMED_MANIFEST_MAX_EXTRACTED_SIZE",
		"plugin-use-manifest-generate-paths":       "ARGOCD_REPO_SERVER_PLUGIN_USE_MANIFEST_GENERATE_PATHS",
		"grpc-max-size-mb":                         "ARGOCD_GRPC_MAX_SIZE_MB",
		"enable-builtin-git-config":                "ARGOCD_REPO_SERVER_ENABLE_BUILTIN_GIT_CONFIG",
		"streamed-manifest-max-tar-size":           "ARGOCD_REPO_SERVER_STREAMED_MANIFEST_MAX_TAR_SIZE",
	}
	// repoServerNoEffect are the repo server's variables in noEffect.
	repoServerNoEffect = []string{
		"ARGOCD_REPO_SERVER_ALLOW_OUT_OF_BOUNDS_SYMLINKS",
		"GRPC_ENABLE_TXT_SERVICE_CONFIG",
		"ARGOCD_REPO_CACHE_EXPIRATION", "ARGOCD_REVISION_CACHE_LOCK_TIMEOUT",
	}
	controllerEnv = map[string]string{
		"commit-signing-key-path":                        "ARGOCD_COMMIT_SERVER_SIGNING_KEY_PATH",
		"commit-signing-key-passphrase-file":             "ARGOCD_COMMIT_SERVER_SIGNING_KEY_PASSPHRASE_FILE",
		"status-processors":                              "ARGOCD_APPLICATION_CONTROLLER_STATUS_PROCESSORS",
		"operation-processors":                           "ARGOCD_APPLICATION_CONTROLLER_OPERATION_PROCESSORS",
		"app-resync":                                     "ARGOCD_RECONCILIATION_TIMEOUT",
		"app-hard-resync":                                "ARGOCD_HARD_RECONCILIATION_TIMEOUT",
		"app-resync-jitter":                              "ARGOCD_RECONCILIATION_JITTER",
		"repo-server":                                    "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER",
		"repo-server-plaintext":                          "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_PLAINTEXT",
		"repo-server-strict-tls":                         "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_STRICT_TLS",
		"repo-server-ca-cert-path":                       "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_CA_CERT_PATH",
		"repo-server-client-cert-path":                   "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_CLIENT_CERT_PATH",
		"repo-server-client-cert-key-path":               "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_CLIENT_CERT_KEY_PATH",
		"repo-server-timeout-seconds":                    "ARGOCD_APPLICATION_CONTROLLER_REPO_SERVER_TIMEOUT_SECONDS",
		"kube-api-qps":                                   "ARGOCD_K8S_CLIENT_QPS",
		"kube-api-burst":                                 "ARGOCD_K8S_CLIENT_BURST",
		"loglevel":                                       "ARGOCD_APPLICATION_CONTROLLER_LOGLEVEL",
		"logformat":                                      "ARGOCD_APPLICATION_CONTROLLER_LOGFORMAT",
		"hydrator-enabled":                               "ARGOCD_HYDRATOR_ENABLED",
		"sharding-method":                                "ARGOCD_CONTROLLER_SHARDING_ALGORITHM",
		"sync-timeout":                                   "ARGOCD_APPLICATION_CONTROLLER_SYNC_TIMEOUT",
		"sync-wave-delay":                                "ARGOCD_SYNC_WAVE_DELAY",
		"kubectl-parallelism-limit":                      "ARGOCD_APPLICATION_CONTROLLER_KUBECTL_PARALLELISM_LIMIT",
		"hydration-processors":                           "ARGOCD_APPLICATION_CONTROLLER_HYDRATION_PROCESSORS",
		"repo-error-grace-period-seconds":                "ARGOCD_REPO_ERROR_GRACE_PERIOD_SECONDS",
		"ignore-normalizer-jq-execution-timeout-seconds": "ARGOCD_IGNORE_NORMALIZER_JQ_TIMEOUT",
		"self-heal-timeout-seconds":                      "ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_TIMEOUT_SECONDS",
		"self-heal-backoff-timeout-seconds":              "ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_TIMEOUT_SECONDS",
		"self-heal-backoff-factor":                       "ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_FACTOR",
		"self-heal-backoff-cap-seconds":                  "ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_CAP_SECONDS",
		"otlp-address":                                   "ARGOCD_APPLICATION_CONTROLLER_OTLP_ADDRESS",
		"otlp-insecure":                                  "ARGOCD_APPLICATION_CONTROLLER_OTLP_INSECURE",
		"otlp-headers":                                   "ARGOCD_APPLICATION_CONTROLLER_OTLP_HEADERS",
		"otlp-attrs":                                     "ARGOCD_APPLICATION_CONTROLLER_OTLP_ATTRS",
		"otlp-sample-ratio":                              "ARGOCD_APPLICATION_CONTROLLER_OTLP_SAMPLE_RATIO",
		"metrics-application-labels":                     "ARGOCD_APPLICATION_CONTROLLER_METRICS_APPLICATION_LABELS",
		"metrics-application-conditions":                 "ARGOCD_APPLICATION_CONTROLLER_METRICS_APPLICATION_CONDITIONS",
		"metrics-cluster-labels":                         "ARGOCD_APPLICATION_CONTROLLER_METRICS_CLUSTER_LABELS",
	}
	// controllerNoEffect are the application controller's variables in noEffect.
	controllerNoEffect = []string{
		"ARGOCD_APPLICATION_CONTROLLER_COMMIT_SERVER", "ARGOCD_APP_STATE_CACHE_EXPIRATION", "ARGOCD_CLUSTER_CACHE_BATCH_EVENTS_PROCESSING",
		"ARGOCD_CLUSTER_CACHE_EVENTS_PROCESSING_INTERVAL", "ARGOCD_DEFAULT_CACHE_EXPIRATION", "ARGOCD_APPLICATION_CONTROLLER_SERVER_SIDE_DIFF",
		"GRPC_ENABLE_TXT_SERVICE_CONFIG",

		"ARGOCD_APPLICATION_CONTROLLER_METRICS_CACHE_EXPIRATION",

		"ARGOCD_APPLICATION_CONTROLLER_PERSIST_RESOURCE_HEALTH",
		"ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_COOLDOWN_SECONDS",

		"REDIS_COMPRESSION", "REDISDB", "REDIS_SERVER", "REDIS_SENTINEL_HOSTS", "REDIS_SENTINEL_MASTER", "ARGOCD_REDIS_KEY_PREFIX",
	}
)

// EnvAnnotation lists, on a component's command, the environment variables
// it reads (comma-separated): the install's argocd-cmd-params-cm variables
// must all be among them.
const EnvAnnotation = "capstan.env"

// readsEnv records that cmd reads the variables names by itself.
func readsEnv(cmd *cobra.Command, names ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	all := strings.Split(cmd.Annotations[EnvAnnotation], ",")
	all = append(all, names...)
	slices.Sort(all)
	cmd.Annotations[EnvAnnotation] = strings.Trim(strings.Join(slices.Compact(all), ","), ",")
}

// bindEnv makes cmd's flags named in vars read their variables before it
// runs (see above). A value the flag cannot take is an error naming the
// variable.
func bindEnv(cmd *cobra.Command, vars map[string]string) {
	for name, env := range vars {
		readsEnv(cmd, env)
		if cmd.Flags().Lookup(name) != nil {
			_ = cmd.Flags().SetAnnotation(name, EnvAnnotation, []string{env}) // for EnvUse
		}
	}
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
