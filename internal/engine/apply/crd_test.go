package apply

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestCustomResourceWithItsDefinition: a custom resource whose CRD comes
// in the same sync is applied once its definition is established (as in
// Argo CD, with or without SkipDryRunOnMissingResource); a dry run of it
// is skipped; a kind nobody defines fails at once with Argo CD's message,
// and with SkipDryRunOnMissingResource once someone installs it.
func TestCustomResourceWithItsDefinition(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := cluster.NewNamespace(t)
	group := ns + ".capstan.io"
	crds := apiextensionsclient.NewForConfigOrDie(cluster.Config).ApiextensionsV1().CustomResourceDefinitions()
	t.Cleanup(func() {
		for _, plural := range []string{"gizmos", "widgets"} {
			_ = crds.Delete(ctx, plural+"."+group, metav1.DeleteOptions{})
		}
	})
	a := newApplier(t, &recorder{})
	run := func(manifests string, dryRun bool) *Result {
		t.Helper()
		plan, err := NewPlan(parse(t, strings.ReplaceAll(manifests, "GROUP", group)))
		if err != nil {
			t.Fatal(err)
		}
		return a.Run(ctx, &Request{App: "gizmos", Namespace: ns, Plan: plan, DryRun: dryRun})
	}
	for _, annotations := range []string{"{}", "{argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true}"} {
		gizmos := "apiVersion: GROUP/v1\nkind: Gizmo\nmetadata: {name: first, annotations: " + annotations + "}\nspec: {size: 3}\n---\n" + definition("gizmos", "Gizmo")
		if res := run(gizmos, true); res.Phase != v1alpha1.OperationSucceeded {
			t.Fatalf("dry run: %s: %s", res.Phase, res.Message)
		}
		if res := run(gizmos, false); res.Phase != v1alpha1.OperationSucceeded {
			t.Fatalf("%s: %s", res.Phase, res.Message)
		}
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}
		got, err := dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Namespace(ns).Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
			t.Errorf("the Gizmo's spec: %v", got.Object["spec"])
		}
	}

	// A kind nobody defines.
	widget := "apiVersion: GROUP/v1\nkind: Widget\nmetadata: {name: w, annotations: ANNOTATIONS}\n"
	res := run(strings.ReplaceAll(widget, "ANNOTATIONS", "{}"), false)
	if res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, `Make sure the "Widget" CRD is installed on the destination cluster`) {
		t.Errorf("a kind nobody defines: %s: %s", res.Phase, res.Message)
	}
	// With the option, the sync waits for someone to install it.
	go func() {
		time.Sleep(time.Second) // the sync below is waiting for the kind by then
		plan, _ := NewPlan(parse(t, strings.ReplaceAll(definition("widgets", "Widget"), "GROUP", group)))
		a.Run(ctx, &Request{App: "operator", Plan: plan})
	}()
	res = run(strings.ReplaceAll(widget, "ANNOTATIONS", "{argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true}"), false)
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Errorf("a kind defined while the sync waits: %s: %s", res.Phase, res.Message)
	}
}

// definition is a CustomResourceDefinition of kind in the group GROUP.
func definition(plural, kind string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.GROUP}
spec:
  group: GROUP
  scope: Namespaced
  names: {plural: ` + plural + `, kind: ` + kind + `}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
}
