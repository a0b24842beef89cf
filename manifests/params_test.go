package manifests_test

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// paramVariables maps each workload of objs to its containers' variables
// set from argocd-cmd-params-cm: key → variable.
func paramVariables(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, o := range objs {
		if o.GetKind() != "Deployment" && o.GetKind() != "StatefulSet" {
			continue
		}
		var spec struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &spec); err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{}
		for _, c := range spec.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if ref := e.ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil && ref.ConfigMapKeyRef.Name == settings.CmdParamsName {
					vars[ref.ConfigMapKeyRef.Key] = e.Name
				}
			}
		}
		out[o.GetName()] = vars
	}
	return out
}

// TestCmdParamsReachTheSameVariables: every argocd-cmd-params-cm key Argo
// CD's install hands to a component reaches Capstan's component of that
// name under the same variable, so an argocd-cmd-params-cm written for Argo
// CD configures the same components (which variables each component acts
// on is the component's test: commands' TestEveryParamIsRead).
func TestCmdParamsReachTheSameVariables(t *testing.T) {
	argo := paramVariables(t, readObjects(t, filepath.Join(argoManifests(t), "install.yaml")))
	capstan := paramVariables(t, readObjects(t, "install.yaml"))
	n := 0
	for workload, vars := range argo {
		for key, name := range vars {
			n++
			if got, ok := capstan[workload][key]; !ok || got != name {
				t.Errorf("%s: key %s reaches %q; Argo CD's install sets %s", workload, key, got, name)
			}
		}
	}
	if n < 150 {
		t.Fatalf("only %d variables in Argo CD's install: is bin/argocd-manifests complete?", n)
	}
}

// TestDocumentedSettingsAreKnown: Argo CD's documented argocd-cm and
// argocd-cmd-params-cm, which set every key, have no key Capstan reports
// as unknown.
func TestDocumentedSettingsAreKnown(t *testing.T) {
	read := func(name string) map[string]string { return toolbin.ArgoCDDocumentedConfigMap(t, name) }
	if unknown := (&settings.ArgoCD{Data: read("argocd-cm.yaml")}).UnknownKeys(); len(unknown) > 0 {
		t.Errorf("argocd-cm keys Argo CD documents, reported unknown: %v", unknown)
	}
	if unknown := (&settings.CmdParams{Data: read("argocd-cmd-params-cm.yaml")}).UnknownKeys(); len(unknown) > 0 {
		t.Errorf("argocd-cmd-params-cm keys Argo CD documents, reported unknown: %v", unknown)
	}
}

func argoManifests(t *testing.T) string {
	return toolbin.Find(t, "CAPSTAN_ARGOCD_MANIFESTS", "bin/argocd-manifests", "argocd-manifests")
}
