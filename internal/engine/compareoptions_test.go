package engine_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/tracking"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestCompareCustomResourceBeforeItsDefinition: a custom resource whose
// CRD comes with it (or that says SkipDryRunOnMissingResource) is Missing
// and OutOfSync until its kind is served, not a comparison error; one
// whose kind nobody defines is an error naming the kind.
func TestCompareCustomResourceBeforeItsDefinition(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := kubeCluster.NewNamespace(t)
	group := ns + ".capstan.io"
	parse := func(y string) *unstructured.Unstructured {
		t.Helper()
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(strings.ReplaceAll(y, "GROUP", group)), &obj.Object); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	crd := `{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: gizmos.GROUP},
		spec: {group: GROUP, scope: Namespaced, names: {plural: gizmos, kind: Gizmo},
		versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}}`
	dests := engine.NewDestinations(engine.DestinationOptions{})
	defer dests.Stop()
	dest, err := dests.Get(inCluster())
	if err != nil {
		t.Fatal(err)
	}
	compare := func(desired ...*unstructured.Unstructured) (*engine.Comparison, error) {
		return dest.Compare(ctx, engine.CompareRequest{App: "gizmos", Namespace: ns, Desired: desired, Live: dest.Watched()})
	}
	for name, desired := range map[string][]*unstructured.Unstructured{
		"with its CRD": {parse(`{apiVersion: GROUP/v1, kind: Gizmo, metadata: {name: g}}`), parse(crd)},
		"with SkipDryRunOnMissingResource": {parse(`{apiVersion: GROUP/v1, kind: Gizmo, metadata: {name: g,
			annotations: {argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true}}}`)},
	} {
		cmp, err := compare(desired...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var gizmo *engine.Resource
		for i := range cmp.Resources {
			if cmp.Resources[i].Key.Kind == "Gizmo" {
				gizmo = &cmp.Resources[i]
			}
		}
		if gizmo == nil || gizmo.Status != v1alpha1.SyncStatusCodeOutOfSync || gizmo.Health.Status != v1alpha1.HealthStatusMissing || gizmo.Key.Namespace != ns {
			t.Errorf("%s: the Gizmo compared as %+v", name, gizmo)
		}
	}
	if _, err := compare(parse(`{apiVersion: GROUP/v1, kind: Gizmo, metadata: {name: g}}`)); err == nil || !strings.Contains(err.Error(), "Gizmo") {
		t.Errorf("a kind nobody defines: %v", err)
	}
}

// TestCompareIgnoreExtraneous: a live object no longer rendered that says
// compare-options: IgnoreExtraneous is listed to prune but leaves the
// Application Synced; without it the Application is OutOfSync.
func TestCompareIgnoreExtraneous(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	ns := kubeCluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(kubeCluster.Config)
	dests := engine.NewDestinations(engine.DestinationOptions{})
	defer dests.Stop()
	dest, err := dests.Get(inCluster())
	if err != nil {
		t.Fatal(err)
	}
	createLive(t, cs, ns, "kept", "tidy", map[string]string{"v": "1"})
	createLive(t, cs, ns, "generated", "tidy", nil)
	for annotation, want := range map[string]v1alpha1.SyncStatusCode{"": v1alpha1.SyncStatusCodeOutOfSync, "IgnoreExtraneous": v1alpha1.SyncStatusCodeSynced} {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "generated", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Annotations[v1alpha1.AnnotationCompareOptions] = annotation
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		cmp, err := dest.Compare(ctx, engine.CompareRequest{App: "tidy", Namespace: ns, Live: dest.Direct(tracking.Annotation),
			Desired: []*unstructured.Unstructured{configMap("", "kept", map[string]string{"v": "1"})},
			Known:   []v1alpha1.ResourceStatus{{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "generated"}}})
		if err != nil {
			t.Fatal(err)
		}
		if cmp.Sync != want || len(cmp.Prune) != 1 || len(cmp.Resources) != 2 {
			t.Errorf("compare-options %q: sync %s, %d to prune, %d resources; want %s, 1, 2", annotation, cmp.Sync, len(cmp.Prune), len(cmp.Resources), want)
		}
	}
}
