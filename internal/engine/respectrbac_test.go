package engine_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestRestrictedKindIsComparedObjectByObject: with resource.respectRBAC,
// a kind the controller may read but not list is compared by reading its
// objects one by one, as Argo CD reads a kind its cache leaves out: drift
// and the object left to prune are still seen.
func TestRestrictedKindIsComparedObjectByObject(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := kubeCluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(kubeCluster.Config)
	const app = "shop"
	createLive(t, cs, ns, "drifted", app, map[string]string{"v": "edited"})
	createLive(t, cs, ns, "removed", app, map[string]string{"v": "1"})
	cfg := kubeCluster.ConfigAs(t, "no-list-"+ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "patch", "create", "update"}},
	})
	dests := engine.NewDestinations(engine.DestinationOptions{RespectRBAC: func() live.RBACMode { return live.RBACNormal }})
	defer dests.Stop()
	dest, err := dests.Get(&cluster.Cluster{Name: cluster.InClusterName, Server: cluster.InClusterServer, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := dest.Compare(ctx, engine.CompareRequest{App: app, Namespace: ns, Live: dest.Watched(),
		Desired: []*unstructured.Unstructured{configMap("", "drifted", map[string]string{"v": "1"})},
		Known:   []v1alpha1.ResourceStatus{{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "removed"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]v1alpha1.SyncStatusCode{}
	for _, r := range cmp.Resources {
		got[r.Key.Ref()] = r.Status
	}
	if got["ConfigMap/"+ns+"/drifted"] != v1alpha1.SyncStatusCodeOutOfSync || len(cmp.Prune) != 1 || cmp.Prune[0].GetName() != "removed" {
		t.Errorf("resources %v, prune %d: want drifted OutOfSync and removed to prune", got, len(cmp.Prune))
	}
	if c, _ := dest.Watching(); !c.Restricted(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) {
		t.Error("ConfigMaps are not marked as unlisted")
	}
}
