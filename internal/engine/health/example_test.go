package health_test

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/engine/health"
)

func ExampleChecker_Check() {
	checker, err := health.NewChecker(map[string]string{
		// A custom check, as argocd-cm holds them, for one kind.
		"resource.customizations.health.example.com_Widget": `return {status = "Degraded", message = "widget " .. obj.metadata.name .. " is broken"}`,
	})
	if err != nil {
		panic(err)
	}
	for _, y := range []string{
		"{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 1}, spec: {replicas: 1}," +
			" status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}",
		"{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}",
	} {
		obj := &unstructured.Unstructured{}
		_ = yaml.Unmarshal([]byte(y), &obj.Object)
		st, _ := checker.Check(obj)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %s %s", obj.GetKind(), st.Status, st.Message)))
	}
	fmt.Println(health.Worst("Healthy", "Progressing", "Degraded"))
	// Output:
	// Deployment Healthy
	// Widget Degraded widget w is broken
	// Degraded
}
