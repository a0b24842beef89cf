package diff

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/internal/engine/csa"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestClientSidePrediction: for an object synced client-side
// (ServerSideApply=false), a label Git dropped shows as a difference
// before the sync, as kubectl's three-way merge would remove it; a
// server-side prediction would keep it (the field manager that set it is
// not the sync's), and a label someone else added stays either way.
func TestClientSidePrediction(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	ctx := context.Background()
	synced := f.desired("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa, labels: {team: a, tier: web}}\ndata: {k: v}\n")
	withLast, err := csa.WithLastApplied(synced)
	if err != nil {
		t.Fatal(err)
	}
	withLast.SetLabels(map[string]string{"team": "a", "tier": "web", "added": "by-hand"})
	liveObj, err := f.client.Resource(configMaps).Namespace(f.ns).Create(ctx, withLast, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		t.Fatal(err)
	}
	dropped := f.desired("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa, labels: {team: a}}\ndata: {k: v}\n")

	r, err := f.differ.Diff(ctx, dropped, liveObj, nil, ClientSide)
	if err != nil {
		t.Fatal(err)
	}
	labels := r.Predicted.GetLabels()
	if !r.Modified || labels["tier"] != "" || labels["added"] != "by-hand" {
		t.Errorf("client-side: modified %v, predicted labels %v; want tier removed, added kept", r.Modified, labels)
	}
	if _, has := r.Predicted.GetAnnotations()[csa.LastAppliedAnnotation]; has {
		t.Error("the prediction shows the last-applied annotation")
	}
	same, err := f.differ.Diff(ctx, synced, liveObj, nil, ClientSide)
	if err != nil || same.Modified {
		t.Errorf("the synced state itself: modified %v, %v", same != nil && same.Modified, err)
	}
	server, err := f.differ.Diff(ctx, dropped, liveObj, nil, ServerSide)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(server.Predicted.Object, "metadata", "labels", "tier"); got != "web" {
		t.Errorf("server-side: tier %q; the other manager's label stays in a server-side prediction", got)
	}
}
