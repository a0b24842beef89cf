package health

import (
	"github.com/capstan-cd/capstan/internal/engine/script"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzCheck computes health of arbitrary live objects, with argocd-cm
// holding an arbitrary custom check for them: never a panic, and always
// one of the health codes.
func FuzzCheck(f *testing.F) {
	defer func(d time.Duration) { script.Timeout = d }(script.Timeout)
	script.Timeout = 100 * time.Millisecond
	f.Add(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 1}}`, `return {status = "Healthy"}`)
	f.Add(`{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running, containerStatuses: [{ready: true}]}}`, `if obj.status.phase == "Running" then return {status = "Healthy"} end return {status = "Progressing"}`)
	f.Add(`{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {conditions: [{type: Failed, status: "True"}]}}`, `return {`)
	f.Add(`{apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, status: {conditions: "x"}}`, `while true do end`)
	f.Add(`{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}}`, `return obj.spec.ports[1].port`)
	f.Fuzz(func(t *testing.T, objYAML, script string) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(objYAML), &m); err != nil || m == nil {
			return
		}
		obj := &unstructured.Unstructured{Object: m}
		c, _ := NewChecker(map[string]string{"resource.customizations.health." + obj.GroupVersionKind().Group + "_" + obj.GetKind(): script})
		st, _ := c.Check(obj)
		if _, known := order[st.Status]; !known {
			t.Fatalf("health %q of %v", st.Status, m)
		}
		plain, _ := NewChecker(nil)
		if st, _ := plain.Check(obj); st.Status != "" {
			if _, known := order[st.Status]; !known {
				t.Fatalf("built-in health %q of %v", st.Status, m)
			}
		}
	})
}
