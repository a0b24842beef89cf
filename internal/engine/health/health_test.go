package health

import (
	"github.com/capstan-cd/capstan/internal/engine/script"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Parse("test", []byte(y))
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v", y, err)
	}
	return objs[0]
}

const (
	H = v1alpha1.HealthStatusHealthy
	P = v1alpha1.HealthStatusProgressing
	D = v1alpha1.HealthStatusDegraded
	S = v1alpha1.HealthStatusSuspended
	M = v1alpha1.HealthStatusMissing
	U = v1alpha1.HealthStatusUnknown
)

func TestBuiltinRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		want v1alpha1.HealthStatusCode
		msg  string
		yaml string
	}{
		{"deployment available", H, "", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2}}`},
		{"deployment rolling out", P, "1 out of 2 new replicas", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 1}}`},
		{"deployment unobserved", P, "observed deployment generation", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 3}, spec: {replicas: 1}, status: {observedGeneration: 2}}`},
		{"deployment paused", S, "paused", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {paused: true}}`},
		{"deployment deadline", D, "exceeded its progress deadline", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded}]}}`},
		{"statefulset ready", H, "rolling update complete", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, readyReplicas: 2, currentReplicas: 2, currentRevision: r1, updateRevision: r1}}`},
		{"statefulset waiting", P, "Waiting for 1 pods", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, readyReplicas: 1}}`},
		{"daemonset rolling", P, "1 out of 3 new pods", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 1}}`},
		{"replicaset failure", D, "quota", `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r}, status: {conditions: [{type: ReplicaFailure, status: "True", message: "exceeded quota"}]}}`},
		{"pod ready", H, "", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`},
		{"pod crashing", D, "back-off", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running, containerStatuses: [{name: c, state: {waiting: {reason: CrashLoopBackOff, message: "back-off"}}}]}}`},
		{"pod pending", P, "", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Pending}}`},
		{"pod failed", D, "failed with exit code 2", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Failed, containerStatuses: [{name: c, state: {terminated: {exitCode: 2, reason: Error}}}]}}`},
		{"pod succeeded", H, "", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Succeeded}}`},
		{"load balancer pending", P, "load balancer", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}}`},
		{"load balancer ready", H, "", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}, status: {loadBalancer: {ingress: [{ip: 10.0.0.1}]}}}`},
		{"cluster ip service", H, "", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: ClusterIP}}`},
		{"ingress without address", P, "", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i}}`},
		{"ingress with address", H, "", `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i}, status: {loadBalancer: {ingress: [{hostname: lb.example.com}]}}}`},
		{"pvc bound", H, "", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}, status: {phase: Bound}}`},
		{"pvc lost", D, "lost", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}, status: {phase: Lost}}`},
		{"job complete", H, "", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {conditions: [{type: Complete, status: "True"}]}}`},
		{"job failed", D, "BackoffLimitExceeded", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {conditions: [{type: Failed, status: "True", message: "BackoffLimitExceeded"}]}}`},
		{"job running", P, "1 active", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {active: 1}}`},
		{"hpa unable to scale", D, "missing metrics", `{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: h}, status: {conditions: [{type: ScalingActive, status: "False", reason: FailedGetResourceMetric, message: "missing metrics"}]}}`},
		{"apiservice unavailable", P, "no endpoints", `{apiVersion: apiregistration.k8s.io/v1, kind: APIService, metadata: {name: a}, status: {conditions: [{type: Available, status: "False", message: "no endpoints"}]}}`},
		{"namespace terminating", P, "", `{apiVersion: v1, kind: Namespace, metadata: {name: n}, status: {phase: Terminating}}`},
		{"child application", D, "broken", `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}, status: {health: {status: Degraded, message: broken}}}`},
		{"crd with ready false", P, "", `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 1}, status: {observedGeneration: 1, conditions: [{type: Ready, status: "False", reason: Waiting}]}}`},
		{"crd without status", H, "", `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}`},
		{"being deleted", P, "deletion", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [x]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := NewChecker(nil)
			st, err := c.Check(obj(t, tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != tc.want || !strings.Contains(st.Message, tc.msg) {
				t.Errorf("got %s %q, want %s containing %q", st.Status, st.Message, tc.want, tc.msg)
			}
		})
	}
	c, _ := NewChecker(nil)
	if st, _ := c.Check(nil); st.Status != M {
		t.Errorf("absent object is %s, want Missing", st.Status)
	}
}

const certificateLua = `
hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for i, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" and condition.status == "False" then
      hs.status = "Degraded"
      hs.message = condition.message
      return hs
    end
    if condition.type == "Ready" and condition.status == "True" then
      hs.status = "Healthy"
      hs.message = condition.message
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs
`

func TestCustomLuaChecks(t *testing.T) {
	c, err := NewChecker(map[string]string{
		"resource.customizations.health.cert-manager.io_Certificate": certificateLua,
		"resource.customizations.health.ConfigMap":                   `return {status = "Suspended", message = "configmaps wait: " .. obj.metadata.name}`,
		"resource.customizations.health.*.crossplane.io_*":           `return {status = "Healthy", message = "crossplane " .. obj.kind}`,
		"resource.customizations":                                    "example.com/Widget:\n  health.lua: |\n    return {status = \"Degraded\", message = \"legacy \" .. tostring(#obj.spec.items)}\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		yaml, msg string
		want      v1alpha1.HealthStatusCode
	}{
		{`{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: c}, status: {conditions: [{type: Ready, status: "True", message: "Certificate is up to date"}]}}`, "up to date", H},
		{`{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: c}, status: {conditions: [{type: Ready, status: "False", message: "Issuing failed"}]}}`, "Issuing failed", D},
		{`{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: c}}`, "Waiting", P},
		{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}}`, "configmaps wait: cfg", S},
		{`{apiVersion: ec2.aws.crossplane.io/v1, kind: VPC, metadata: {name: v}}`, "crossplane VPC", H},
		{`{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {items: [a, b, c]}}`, "legacy 3", D},
	} {
		st, err := c.Check(obj(t, tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != tc.want || !strings.Contains(st.Message, tc.msg) {
			t.Errorf("%s: got %s %q, want %s %q", tc.yaml, st.Status, st.Message, tc.want, tc.msg)
		}
	}
}

func TestBadLua(t *testing.T) {
	defer func(d time.Duration) { script.Timeout = d }(script.Timeout)
	script.Timeout = 200 * time.Millisecond
	// One key that does not compile is named, makes its own kind Unknown
	// with that error, and leaves every other kind and key working.
	c, err := NewChecker(map[string]string{
		"resource.customizations.health.apps_Deployment": "return {",
		"resource.customizations.health.ConfigMap":       `return {status = "Degraded", message = "custom"}`,
	})
	if err == nil || !strings.Contains(err.Error(), "apps_Deployment") {
		t.Errorf("syntax error: got %v, want an error naming the key", err)
	}
	st, err := c.Check(obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}}`))
	if st.Status != v1alpha1.HealthStatusUnknown || err == nil || !strings.Contains(st.Message, "apps_Deployment") {
		t.Errorf("the broken key's kind: got %+v, %v; want Unknown naming the key", st, err)
	}
	if st, err := c.Check(obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`)); err != nil || st.Message != "custom" {
		t.Errorf("another key's kind: got %+v, %v; want its custom check", st, err)
	}
	if st, err := c.Check(obj(t, `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: ClusterIP}}`)); err != nil || st.Status != v1alpha1.HealthStatusHealthy {
		t.Errorf("a built-in kind: got %+v, %v; want Healthy", st, err)
	}
	if _, err := NewChecker(map[string]string{"resource.customizations": "not: [valid"}); err == nil || !strings.Contains(err.Error(), "resource.customizations") {
		t.Errorf("legacy key: got %v, want an error naming it", err)
	}
	for script, want := range map[string]string{
		`return {status = "Great"}`:                          `"Great"`,
		`return "Healthy"`:                                   "must return a table",
		`os.execute("true") return {status = "Healthy"}`:     "non-function",
		`require("io")`:                                      `module "io" is not available`,
		`io.open("/etc/passwd") return {status = "Healthy"}`: "with key 'open'",
		`dofile("/etc/passwd")`:                              "non-function",
		`while true do end`:                                  "context deadline",
	} {
		c, err := NewChecker(map[string]string{"resource.customizations.health.ConfigMap": script})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Check(obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", script, err, want)
		}
		if st.Status != U {
			t.Errorf("%s: status %s, want Unknown", script, st.Status)
		}
	}
}

func TestWorst(t *testing.T) {
	for _, tc := range []struct {
		in   []v1alpha1.HealthStatusCode
		want v1alpha1.HealthStatusCode
	}{
		{nil, H},
		{[]v1alpha1.HealthStatusCode{H, S}, S},
		{[]v1alpha1.HealthStatusCode{H, P, S}, P},
		{[]v1alpha1.HealthStatusCode{P, M}, M},
		{[]v1alpha1.HealthStatusCode{M, D, H}, D},
		{[]v1alpha1.HealthStatusCode{D, U}, U},
	} {
		if got := Worst(tc.in...); got != tc.want {
			t.Errorf("Worst(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
