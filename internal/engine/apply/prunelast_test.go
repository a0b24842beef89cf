package apply

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`

// TestPruneLastWaitsForHealth: with PruneLast (on the sync or on the
// object pruned), the last wave is waited for before anything is pruned;
// without it, the last wave is not waited for.
func TestPruneLastWaitsForHealth(t *testing.T) {
	localcluster.Need(t)
	for _, tc := range []struct {
		name       string
		options    Options
		annotation string
		want       []string
	}{
		{"default", Options{}, "", []string{"apply Deployment/web", "prune ConfigMap/old"}},
		{"PruneLast on the sync", Options{PruneLast: true}, "", []string{"apply Deployment/web", "healthy Deployment/web", "prune ConfigMap/old"}},
		{"PruneLast on the object", Options{}, "PruneLast=true", []string{"apply Deployment/web", "healthy Deployment/web", "prune ConfigMap/old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.NewNamespace(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			old := &unstructured.Unstructured{}
			old.SetAPIVersion("v1")
			old.SetKind("ConfigMap")
			old.SetName("old")
			old.SetNamespace(ns)
			if tc.annotation != "" {
				old.SetAnnotations(map[string]string{v1alpha1.AnnotationSyncOptions: tc.annotation})
			}
			setup, _ := NewPlan([]*unstructured.Unstructured{old.DeepCopy()})
			a := newApplier(t, &recorder{})
			if res := a.Run(ctx, &Request{App: "p", Namespace: ns, Plan: setup}); res.Phase != v1alpha1.OperationSucceeded {
				t.Fatal(res.Message)
			}
			rec := &recorder{}
			a = newApplier(t, rec)
			plan, err := NewPlan(parse(t, webDeployment))
			if err != nil {
				t.Fatal(err)
			}
			res := a.Run(ctx, &Request{App: "p", Namespace: ns, Plan: plan, Prune: []*unstructured.Unstructured{old}, AllowPrune: true, Options: tc.options})
			if res.Phase != v1alpha1.OperationSucceeded || !slices.Equal(rec.events, tc.want) {
				t.Errorf("%s %s: steps %q, want %q", res.Phase, res.Message, rec.events, tc.want)
			}
		})
	}
}

func ExampleApplier_Run() {
	mapper, _ := live.New(cluster.Config, live.Options{})
	defer mapper.Stop()
	checker, _ := health.NewChecker(nil)
	a := &Applier{Client: dynamic.NewForConfigOrDie(cluster.Config), Mapper: mapper, Health: checker}

	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("example-apply")
	plan, _ := NewPlan([]*unstructured.Unstructured{cm})
	res := a.Run(context.Background(), &Request{App: "example", Namespace: "default", Plan: plan})
	fmt.Println(res.Phase)
	for _, r := range res.Resources {
		fmt.Println(r.Kind, r.Namespace, r.Name, r.Status)
	}
	// Output:
	// Succeeded
	// ConfigMap default example-apply Synced
}
