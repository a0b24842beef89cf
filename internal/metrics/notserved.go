package metrics

// NotServed are the metrics Argo CD documents that no Capstan component
// serves, each with why; the metrics reference lists them.
var NotServed = map[string]string{
	"argocd_appset_app_refresh_total": "the ApplicationSet controller asks no refresh of the Applications a rollout changes: " +
		"the application controller compares a changed Application at once",
	"argocd_commitserver_userinfo_request_duration_seconds": "Argo CD's commit server registers it but records nothing in it; " +
		"the source hydrator's commits are counted by the other argocd_commitserver_* metrics, served by the application controller",
	"argocd_kubectl_exec_pending": "Capstan runs no kubectl: it applies through client-go, whose requests argocd_kubectl_* count",
	"argocd_kubectl_exec_total":   "Capstan runs no kubectl: it applies through client-go, whose requests argocd_kubectl_* count",
	"argocd_redis_request_duration": "only the repo server uses Redis (argocd_redis_request_duration_seconds); " +
		"the application controller and API server keep their state in memory",
	"argocd_resource_events_processed_in_batch": whyNoBatches,
	"argocd_resource_events_processing":         whyNoBatches,
}

const (
	whyNoBatches = "the application controller handles resource events one at a time as they arrive, not in batches " +
		"(argocd_cluster_events_total counts them)"
)
