package engine_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
)

// TestCompareCustomResourceBeforeItsDefinition: a custom resource whose
// CRD comes with it (or that says SkipDryRunOnMissingResource) is Missing
// and OutOfSync until its kind is served, not a comparison error; one
// whose kind nobody defines is an error naming the kind.
func TestCompareCustomResourceBeforeItsDefinition(t *testing.T) {
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
