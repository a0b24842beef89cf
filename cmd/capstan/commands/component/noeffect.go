package component

import (
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// Reasons an argocd-cmd-params-cm setting changes nothing in Capstan.
const (
	whyNoRedis      = "this component keeps no Redis cache (the repo server's manifest cache is the only one)"
	whyNoTxtConfig  = "gRPC service configurations are not looked up in DNS TXT records"
	whyNoRedisCache = "the state it names is kept in memory, not in a Redis cache with an expiry"
	whyNoSubmodules = "git generators read files through the repo server, whose reposerver.enable.git.submodule applies"
	whyCooldown     = "Argo CD deprecated it and ignores it too: a self-heal count starts again with a new revision"
)

// noEffect are the argocd-cmd-params-cm variables Argo CD's manifests set
// that Capstan's components accept but that change nothing, each with why.
// A component logs each one that is set, once when it starts: a setting
// that does nothing is never silent.
var noEffect = map[string]string{
	// Every component.
	"GRPC_ENABLE_TXT_SERVICE_CONFIG":    whyNoTxtConfig,
	"REDIS_COMPRESSION":                 whyNoRedis,
	"ARGOCD_DEFAULT_CACHE_EXPIRATION":   whyNoRedisCache,
	"ARGOCD_APP_STATE_CACHE_EXPIRATION": whyNoRedisCache,
	"ARGOCD_GIT_MODULES_ENABLED":        whyNoSubmodules,

	// The application controller.
	"ARGOCD_APPLICATION_CONTROLLER_COMMIT_SERVER":                      "the application controller commits hydrated manifests itself; there is no commit server",
	"ARGOCD_CLUSTER_CACHE_BATCH_EVENTS_PROCESSING":                     "the live cache applies watch events as they arrive",
	"ARGOCD_CLUSTER_CACHE_EVENTS_PROCESSING_INTERVAL":                  "the live cache applies watch events as they arrive",
	"ARGOCD_APPLICATION_CONTROLLER_SERVER_SIDE_DIFF":                   "Capstan always compares against a server-side dry-run apply",
	"ARGOCD_APPLICATION_CONTROLLER_METRICS_CACHE_EXPIRATION":           "metrics are computed from the live state, not cached",
	"ARGOCD_APPLICATION_CONTROLLER_PERSIST_RESOURCE_HEALTH":            "each resource's health is always kept in the Application's status",
	"ARGOCD_APPLICATION_CONTROLLER_SELF_HEAL_BACKOFF_COOLDOWN_SECONDS": whyCooldown,
	"REDISDB":                 whyNoRedis,
	"REDIS_SERVER":            whyNoRedis,
	"REDIS_SENTINEL_HOSTS":    whyNoRedis,
	"REDIS_SENTINEL_MASTER":   whyNoRedis,
	"ARGOCD_REDIS_KEY_PREFIX": whyNoRedis,

	// Dex.
	"DEX_CONTINUE_ON_CONNECTOR_FAILURE": "the Dex release the image carries stops on a connector failure",

	// The ApplicationSet controller.
	"ARGOCD_APPLICATIONSET_CONTROLLER_WEBHOOK_PARALLELISM_LIMIT": "Git webhooks reach the ApplicationSet controller through the API server",

	// The repo server.
	"ARGOCD_REPO_SERVER_ALLOW_OUT_OF_BOUNDS_SYMLINKS": "symbolic links out of a repository are always refused: through one, a repository could read the repo server's own files (its service account token among them) into manifests",
	"ARGOCD_REPO_CACHE_EXPIRATION":                    "revisions are resolved again after a few seconds, not cached for long",
	"ARGOCD_REVISION_CACHE_LOCK_TIMEOUT":              "renders of one revision are not serialised by a lock",

	// The API server.
	"ARGOCD_SERVER_CONNECTION_STATUS_CACHE_EXPIRATION":              whyNoRedisCache,
	"ARGOCD_SERVER_OIDC_CACHE_EXPIRATION":                           whyNoRedisCache,
	"ARGOCD_SERVER_GLOB_CACHE_SIZE":                                 "RBAC globs are compiled with the policy",
	"ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING": "the API server generates no Applications",
	"ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_GITHUB_API_METRICS":    "the ApplicationSet controller counts the GitHub API calls of its generators; the API server's previews are not counted",
}

// NoEffectReason is why the argocd-cmd-params-cm variable changes nothing
// in Capstan; "" when it is acted on or unknown.
func NoEffectReason(variable string) string { return noEffect[variable] }

// NoEffectAnnotation lists, on a component's command, the variables of
// noEffect it accepts (comma-separated).
const NoEffectAnnotation = "capstan.env.noeffect"

// acceptEnv records that cmd reads the no-effect variables names (each
// must be in noEffect) and makes it log, before it runs, each one set.
func acceptEnv(cmd *cobra.Command, names ...string) {
	readsEnv(cmd, names...)
	cmd.Annotations[NoEffectAnnotation] = strings.Join(names, ",")
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		sort.Strings(names)
		for _, name := range names {
			if value, set := os.LookupEnv(name); set && value != "" {
				slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil)).Warn("argocd-cmd-params-cm setting has no effect in Capstan",
					"variable", name, "reason", noEffect[name])
			}
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}
