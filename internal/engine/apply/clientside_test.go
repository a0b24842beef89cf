package apply

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/csa"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestClientSideApply: with ServerSideApply=false a sync applies as kubectl
// apply does: the object records what was applied (last-applied
// annotation), and the next sync's three-way merge removes what Git
// dropped (a label, a container's env entry) while keeping what others
// added (a label, a container the desired state does not name), merging
// containers by name.
func TestClientSideApply(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := cluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	a := newApplier(t, &recorder{})
	sync := func(manifest string) {
		t.Helper()
		plan, err := NewPlan(parse(t, manifest))
		if err != nil {
			t.Fatal(err)
		}
		opts, _ := ParseOptionList([]string{"ServerSideApply=false"})
		if res := a.Run(ctx, &Request{App: "csa", Namespace: ns, Plan: plan, Options: opts}); res.Phase != v1alpha1.OperationSucceeded {
			t.Fatalf("%s: %s", res.Phase, res.Message)
		}
	}
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {team: a, tier: web}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
`
	sync(deploy)
	got, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[csa.LastAppliedAnnotation] == "" {
		t.Fatal("no last-applied annotation: not applied client-side")
	}
	for _, m := range got.ManagedFields {
		if m.Operation == metav1.ManagedFieldsOperationApply {
			t.Errorf("a server-side apply manager: %s", m.Manager)
		}
	}
	// Someone else adds a label and a sidecar container.
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"added":"by-hand"}},"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"side:1"}]}}}}`),
		metav1.PatchOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	// Git drops the tier label and the env entry B.
	sync(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {team: a}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:2
        env: [{name: A, value: "1"}]
`)
	got, err = cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, has := got.Labels["tier"]; has || got.Labels["added"] != "by-hand" || got.Labels["team"] != "a" {
		t.Errorf("labels: %v; want tier removed, added kept", got.Labels)
	}
	containers := got.Spec.Template.Spec.Containers
	if len(containers) != 2 {
		t.Fatalf("containers: %+v; want web and the sidecar", containers)
	}
	for _, c := range containers {
		if c.Name == "web" && (c.Image != "web:2" || len(c.Env) != 1) {
			t.Errorf("web container: %s %+v; want web:2 with env A only", c.Image, c.Env)
		}
	}
}
