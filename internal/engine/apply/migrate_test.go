package apply

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestClientSideApplyMigration: an object kubectl apply made keeps a key
// Git no longer has after a plain server-side apply, since kubectl's
// manager owns it; with the migration (the default) the sync takes the
// fields over and the key goes; ClientSideApplyMigration=false keeps it.
func TestClientSideApplyMigration(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := cluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	a := newApplier(t, &recorder{})
	for _, tt := range []struct {
		name, annotations string
		keyKept           bool
	}{
		{"migrated", "{}", false},
		{"not migrated", "{argocd.argoproj.io/sync-options: ClientSideApplyMigration=false}", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// As kubectl apply (client-side) leaves it.
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tt.name[:3]},
				Data: map[string]string{"kept": "1", "removed": "2"}}, metav1.CreateOptions{FieldManager: defaultCSAManager}); err != nil {
				t.Fatal(err)
			}
			plan, err := NewPlan(parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+tt.name[:3]+", annotations: "+tt.annotations+"}\ndata: {kept: '1'}\n"))
			if err != nil {
				t.Fatal(err)
			}
			if res := a.Run(ctx, &Request{App: "csa", Namespace: ns, Plan: plan}); res.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("%s: %s", res.Phase, res.Message)
			}
			got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, tt.name[:3], metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, kept := got.Data["removed"]; kept != tt.keyKept || got.Data["kept"] != "1" {
				t.Errorf("data after the sync: %v (the removed key kept: %v, want %v)", got.Data, kept, tt.keyKept)
			}
		})
	}
}
