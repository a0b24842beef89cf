package apply

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

func parse(t *testing.T, y string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifest.Parse("plan", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func names(tasks []*Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.Obj.GetKind()+"/"+t.Obj.GetName())
	}
	return out
}

const app = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: Service
metadata: {name: web}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b-config}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a-config}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: late
  annotations: {argocd.argoproj.io/sync-wave: "5"}
---
apiVersion: v1
kind: Secret
metadata:
  name: early
  annotations: {argocd.argoproj.io/sync-wave: "-1"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: smoke
  annotations: {argocd.argoproj.io/hook: "PostSync,SyncFail"}
---
apiVersion: v1
kind: Pod
metadata:
  name: skipped
  annotations: {argocd.argoproj.io/hook: Skip}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: helm-pre
  annotations: {helm.sh/hook: "pre-install,pre-upgrade", helm.sh/hook-weight: "-2", helm.sh/hook-delete-policy: hook-succeeded}
---
apiVersion: v1
kind: Pod
metadata:
  name: helm-test
  annotations: {helm.sh/hook: test}
`

func TestPlanOrder(t *testing.T) {
	p, err := NewPlan(parse(t, app))
	if err != nil {
		t.Fatal(err)
	}
	want := map[v1alpha1.SyncPhase][]string{
		v1alpha1.SyncPhasePreSync:  {"Job/helm-pre", "Job/migrate"},
		v1alpha1.SyncPhaseSync:     {"Secret/early", "Namespace/shop", "ConfigMap/a-config", "ConfigMap/b-config", "Service/web", "Deployment/web", "Widget/w", "ConfigMap/late"},
		v1alpha1.SyncPhasePostSync: {"Job/smoke"},
		v1alpha1.SyncPhaseSyncFail: {"Job/smoke"},
	}
	for phase, w := range want {
		if got := names(p.Phases[phase]); !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %v, want %v", phase, got, w)
		}
	}
	var waves [][]string
	for _, wave := range p.Waves(v1alpha1.SyncPhaseSync) {
		waves = append(waves, names(wave))
	}
	if len(waves) != 3 || waves[0][0] != "Secret/early" || waves[2][0] != "ConfigMap/late" {
		t.Errorf("waves = %v", waves)
	}
	pre := p.Phases[v1alpha1.SyncPhasePreSync]
	if pre[0].Wave != -2 || !reflect.DeepEqual(pre[0].DeletePolicies, []DeletePolicy{HookSucceeded}) {
		t.Errorf("helm hook: wave %d policies %v", pre[0].Wave, pre[0].DeletePolicies)
	}
	if !reflect.DeepEqual(p.Phases[v1alpha1.SyncPhasePostSync][0].DeletePolicies, []DeletePolicy{BeforeHookCreation}) {
		t.Error("default delete policy is not BeforeHookCreation")
	}
}

func TestBadAnnotationsNameTheObject(t *testing.T) {
	for _, y := range []string{
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/sync-wave: soon}}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/hook: Whenever}}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {argocd.argoproj.io/sync-options: "Prune=maybe"}}}`,
	} {
		if _, err := NewPlan(parse(t, y)); err == nil || !strings.Contains(err.Error(), "ConfigMap/c") {
			t.Errorf("%s: got %v, want an error naming ConfigMap/c", y, err)
		}
	}
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions("CreateNamespace=true, Prune=false,PruneLast=true,ServerSideApply=true,Delete=confirm,PrunePropagationPolicy=background")
	if err != nil {
		t.Fatal(err)
	}
	if !o.CreateNamespace || o.Prune == nil || *o.Prune || !o.PruneLast || o.Delete == nil || !*o.Delete || o.PrunePropagation != "background" {
		t.Errorf("options = %+v", o)
	}
	for _, bad := range []string{"Nope=true", "Prune", "Replace=yes", "PrunePropagationPolicy=sideways"} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
