package controller

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/metricscrape"
)

func TestMetricsDescribeApplications(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	addr := metricscrape.Addr(t)
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) { o.MetricsAddr = addr })
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{"a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	cmApp(t, e, "measured", remote.URL, "a", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)})
	e.waitSyncedHealthy("measured")
	info, err := kubernetes.NewForConfigOrDie(testCluster.Config).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	version := info.Major + "." + info.Minor
	want := []string{
		`argocd_app_info{autosync_enabled="true",dest_namespace=`,
		fmt.Sprintf(`name="measured",namespace="%s",operation="",project="default",repo=`, e.ns),
		`sync_status="Synced"} 1`,
		fmt.Sprintf(`argocd_app_sync_total{dest_server="https://kubernetes.default.svc",dry_run="false",name="measured",namespace="%s",phase="Succeeded",project="default"} 1`, e.ns),
		fmt.Sprintf(`argocd_app_reconcile_count{dest_server="https://kubernetes.default.svc",namespace="%s"}`, e.ns),
		fmt.Sprintf(`argocd_app_k8s_request_total{dry_run="false",name="measured",namespace="%s",project="default",resource_kind="configmaps"`, e.ns),
		`argocd_cluster_api_resource_objects{server="https://kubernetes.default.svc"}`,
		// The local cluster's version, as its API server answers it.
		fmt.Sprintf(`argocd_cluster_info{k8s_version="%s",name="in-cluster",server="https://kubernetes.default.svc"} 1`, version),
		fmt.Sprintf(`argocd_cluster_connection_status{k8s_version="%s",server="https://kubernetes.default.svc"} 1`, version),
		`argocd_cluster_events_total{group="",kind="ConfigMap",server="https://kubernetes.default.svc"}`,
		fmt.Sprintf(`argocd_app_sync_duration_seconds_total{dest_server="https://kubernetes.default.svc",name="measured",namespace="%s",project="default"}`, e.ns),
		fmt.Sprintf(`argocd_app_orphaned_resources_count{name="measured",namespace="%s",project="default"} 0`, e.ns),
		// client-go's request metrics, of every client of the process.
		`argocd_kubectl_requests_total{code="200",host="`,
		`argocd_kubectl_request_duration_seconds_bucket{host="`,
	}
	metricscrape.Until(t, addr, want...)
}
