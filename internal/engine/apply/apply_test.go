package apply

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/health"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &cluster))
}

type recorder struct {
	mu     sync.Mutex
	events []string
	// onApply runs before each apply, to look at the cluster at that moment.
	onApply func(*Task)
}

func (r *recorder) record(e Event) {
	if e.Action == "apply" && r.onApply != nil {
		r.onApply(e.Task)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, string(e.Action)+" "+e.Task.Obj.GetKind()+"/"+e.Task.Obj.GetName())
}

func newApplier(t *testing.T, rec *recorder) *Applier {
	localcluster.Need(t)
	mapper, err := live.New(cluster.Config, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mapper.Stop)
	checker, _ := health.NewChecker(nil)
	return &Applier{Client: dynamic.NewForConfigOrDie(cluster.Config), Mapper: mapper, Health: checker, PollInterval: 100 * time.Millisecond, Progress: rec.record}
}

const syncApp = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: after-web
  annotations: {argocd.argoproj.io/sync-wave: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: before-web
  annotations: {argocd.argoproj.io/sync-wave: "-1"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrate:1.0}]
`

func TestSyncRunsHooksAndWavesInOrderAndWaitsForHealth(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	rec := &recorder{}
	rec.onApply = func(task *Task) {
		if task.Obj.GetName() != "after-web" {
			return
		}
		d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil || d.Status.AvailableReplicas != 2 {
			t.Errorf("wave 1 started before wave 0 was healthy: %v %+v", err, d.Status)
		}
	}
	a := newApplier(t, rec)
	plan, err := NewPlan(parse(t, syncApp))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := a.Run(ctx, &Request{App: "shop", Namespace: ns, Plan: plan})
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("sync %s: %s", res.Phase, res.Message)
	}
	var applies []string
	for _, e := range rec.events {
		if strings.HasPrefix(e, "apply ") {
			applies = append(applies, strings.TrimPrefix(e, "apply "))
		}
	}
	want := []string{"Job/migrate", "ConfigMap/before-web", "Deployment/web", "ConfigMap/after-web"}
	if strings.Join(applies, ",") != strings.Join(want, ",") {
		t.Errorf("apply order %v, want %v", applies, want)
	}
	// The hook completed and was deleted per HookSucceeded.
	if _, err := cs.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("PreSync job still exists after success: %v", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "after-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations[v1alpha1.AnnotationTrackingID]; got != "shop:/ConfigMap:"+ns+"/after-web" {
		t.Errorf("tracking id = %q", got)
	}
	for _, r := range res.Resources {
		if r.Status != v1alpha1.ResultCodeSynced {
			t.Errorf("%s/%s: %s %s", r.Kind, r.Name, r.Status, r.Message)
		}
	}
}

func TestFailureRunsSyncFailHooks(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	a := newApplier(t, &recorder{})
	plan, err := NewPlan(parse(t, `
apiVersion: v1
kind: Service
metadata: {name: broken}
spec:
  ports: [{port: 999999}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: on-failure
  annotations: {argocd.argoproj.io/hook: SyncFail}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := a.Run(ctx, &Request{App: "bad", Namespace: ns, Plan: plan})
	if res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, "Service/"+ns+"/broken") {
		t.Fatalf("phase %s message %q, want Failed naming the Service", res.Phase, res.Message)
	}
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "on-failure", metav1.GetOptions{}); err != nil {
		t.Errorf("SyncFail hook did not run: %v", err)
	}
}

func TestPruneRespectsOptions(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	ctx := context.Background()
	mk := func(name string, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetName(name)
		u.SetNamespace(ns)
		u.SetAnnotations(annotations)
		return u
	}
	old := mk("old", nil)
	keep := mk("keep", map[string]string{v1alpha1.AnnotationSyncOptions: "Prune=false"})
	a := newApplier(t, &recorder{})
	plan, _ := NewPlan([]*unstructured.Unstructured{old, keep})
	if res := a.Run(ctx, &Request{App: "p", Namespace: ns, Plan: plan}); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatal(res.Message)
	}
	empty, _ := NewPlan(nil)
	// Without prune allowed, nothing is deleted.
	res := a.Run(ctx, &Request{App: "p", Namespace: ns, Plan: empty, Prune: []*unstructured.Unstructured{old, keep}})
	for _, r := range res.Resources {
		if r.Status != v1alpha1.ResultCodePruneSkipped {
			t.Errorf("%s without prune: %s", r.Name, r.Status)
		}
	}
	res = a.Run(ctx, &Request{App: "p", Namespace: ns, Plan: empty, Prune: []*unstructured.Unstructured{old, keep}, AllowPrune: true})
	got := map[string]v1alpha1.ResultCode{}
	for _, r := range res.Resources {
		got[r.Name] = r.Status
	}
	if got["old"] != v1alpha1.ResultCodePruned || got["keep"] != v1alpha1.ResultCodePruneSkipped {
		t.Errorf("prune results %v", got)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("Prune=false object deleted: %v", err)
	}
	eventually.String(t, "the pruned object gone", func() string {
		if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "old", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})
}

// TestDryRunChangesNothingAndCreateNamespace: a dry run creates nothing;
// CreateNamespace makes the namespace with managedNamespaceMetadata's
// labels and annotations and keeps them as it says.
func TestDryRunChangesNothingAndCreateNamespace(t *testing.T) {
	localcluster.Need(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	ctx := context.Background()
	ns := "created-by-sync-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:20]
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	a := newApplier(t, &recorder{})
	plan, _ := NewPlan(parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`))
	if res := a.Run(ctx, &Request{App: "d", Namespace: "default", Plan: plan, DryRun: true}); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatal(res.Message)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "c", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry run created the object: %v", err)
	}
	plan, _ = NewPlan(parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`))
	meta := &v1alpha1.ManagedNamespaceMetadata{Labels: map[string]string{"team": "web", "tier": "1"}, Annotations: map[string]string{"owner": "web-team"}}
	res := a.Run(ctx, &Request{App: "d", Namespace: ns, Plan: plan, Options: Options{CreateNamespace: true}, NamespaceMetadata: meta})
	if res.Phase != v1alpha1.OperationSucceeded {
		t.Fatal(res.Message)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "c", metav1.GetOptions{}); err != nil {
		t.Errorf("object not created in the new namespace: %v", err)
	}
	created, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || created.Labels["team"] != "web" || created.Labels["tier"] != "1" || created.Annotations["owner"] != "web-team" {
		t.Fatalf("the namespace's metadata: %v %v %v", err, created.Labels, created.Annotations)
	}
	// managedNamespaceMetadata changed: a label it no longer names goes.
	delete(meta.Labels, "tier")
	plan, _ = NewPlan(parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`))
	a.Run(ctx, &Request{App: "d", Namespace: ns, Plan: plan, Options: Options{CreateNamespace: true}, NamespaceMetadata: meta})
	if got, _ := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); got.Labels["team"] != "web" || got.Labels["tier"] != "" {
		t.Errorf("after the change: %v", got.Labels)
	}
}

func TestReplaceAndValidateOptions(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	ctx := context.Background()
	a := newApplier(t, &recorder{})
	run := func(manifest string, opts Options) *Result {
		t.Helper()
		plan, err := NewPlan(parse(t, manifest))
		if err != nil {
			t.Fatal(err)
		}
		return a.Run(ctx, &Request{App: "opts", Namespace: ns, Plan: plan, Options: opts})
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: \"1\"}\n"
	if res := run(cm, Options{}); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("apply: %s", res.Message)
	}
	// Someone else adds a key; an apply keeps it, a replace drops it.
	live, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
	live.Data["extra"] = "x"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, live, metav1.UpdateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	run(cm, Options{})
	if got, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); got.Data["extra"] != "x" {
		t.Fatalf("test premise: apply keeps another manager's key, got %v", got.Data)
	}
	if res := run(cm, Options{Replace: true}); res.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("replace: %s", res.Message)
	}
	if got, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); len(got.Data) != 1 || got.Data["a"] != "1" {
		t.Errorf("after Replace=true data = %v, want only a", got.Data)
	}
	// An unknown field fails the sync unless Validate=false.
	typo := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo}\ndatta: {a: \"1\"}\n"
	if res := run(typo, Options{}); res.Phase != v1alpha1.OperationFailed || !strings.Contains(res.Message, "datta") {
		t.Errorf("unknown field: %s %s, want Failed naming the field", res.Phase, res.Message)
	}
	// Server-side apply needs every field in the schema; a whole-object
	// replace with validation off drops the unknown one.
	no := false
	if res := run(typo, Options{Validate: &no, Replace: true}); res.Phase != v1alpha1.OperationSucceeded {
		t.Errorf("Validate=false with Replace=true: %s %s", res.Phase, res.Message)
	}
}
