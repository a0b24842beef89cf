package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestCustomResourceHealth: each widely used custom resource family that
// Argo CD's library has no script for, in each of its states, as its
// project documents its status. (The library's kinds are held to Argo CD's
// own cases by TestArgoCDHealthCases.)
func TestCustomResourceHealth(t *testing.T) {
	const (
		H = v1alpha1.HealthStatusHealthy
		P = v1alpha1.HealthStatusProgressing
		D = v1alpha1.HealthStatusDegraded
		S = v1alpha1.HealthStatusSuspended
	)
	tests := []struct {
		name string
		obj  string
		want v1alpha1.HealthStatusCode
	}{
		// Argo Workflows
		{"workflow running", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Running}}", P},
		{"workflow succeeded", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Succeeded}}", H},
		{"workflow failed", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Failed}}", D},
		{"workflow error", "{apiVersion: argoproj.io/v1alpha1, kind: Workflow, status: {phase: Error}}", D},
		// Istio
		{"virtual service", "{apiVersion: networking.istio.io/v1, kind: VirtualService, spec: {}}", H},
		{"virtual service invalid", "{apiVersion: networking.istio.io/v1, kind: VirtualService, status: {validationMessages: [{level: ERROR, type: {code: IST0101, name: ReferencedResourceNotFound}}]}}", D},
		{"virtual service not yet pushed", "{apiVersion: networking.istio.io/v1, kind: VirtualService, status: {conditions: [{type: Reconciled, status: 'False'}]}}", P},
		// Prometheus operator
		{"service monitor", "{apiVersion: monitoring.coreos.com/v1, kind: ServiceMonitor, spec: {}}", H},
		// Velero
		{"backup storage location unavailable", "{apiVersion: velero.io/v1, kind: BackupStorageLocation, status: {phase: Unavailable}}", D},
		// Tekton
		{"pipeline", "{apiVersion: tekton.dev/v1, kind: Pipeline, spec: {}}", H},
	}
	checker, err := NewChecker(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// As the API server's JSON decodes: whole numbers are int64.
			data, err := yaml.YAMLToJSON([]byte(tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			obj.SetName("x")
			if _, ok := builtinLibrary().lookup(obj.GroupVersionKind().GroupKind()); ok {
				t.Fatalf("%s has a script in Argo CD's library: its cases are Argo CD's", obj.GetKind())
			}
			got, err := checker.Check(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Errorf("%s (%q), want %s", got.Status, got.Message, tt.want)
			}
		})
	}
}
