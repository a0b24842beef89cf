package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine/live"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{}, &cluster))
}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

const desiredYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
      - name: sidecar
        image: busybox:1.36
`

type fixture struct {
	t      *testing.T
	ns     string
	client dynamic.Interface
	differ *Differ
}

func setup(t *testing.T) *fixture {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	mapper, err := live.New(cluster.Config, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mapper.Stop)
	client := dynamic.NewForConfigOrDie(cluster.Config)
	return &fixture{t: t, ns: ns, client: client, differ: New(client, mapper, Options{})}
}

func (f *fixture) desired(y string) *unstructured.Unstructured {
	objs, err := manifest.Parse("desired", []byte(y))
	if err != nil {
		f.t.Fatal(err)
	}
	objs[0].SetNamespace(f.ns)
	return objs[0]
}

// apply applies a Deployment for real as manager, returning the live object.
func (f *fixture) apply(obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	f.t.Helper()
	return f.applyTo(deployments, obj, manager)
}

// applyTo applies obj, a resource of gvr, for real as manager.
func (f *fixture) applyTo(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	f.t.Helper()
	data, _ := json.Marshal(obj)
	force := true
	out, err := f.client.Resource(gvr).Namespace(f.ns).Patch(context.Background(), obj.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: manager, Force: &force})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) diff(desired, liveObj *unstructured.Unstructured, ignore ...v1alpha1.ResourceIgnoreDifferences) *Result {
	f.t.Helper()
	r, err := f.differ.Diff(context.Background(), desired, liveObj, ignore, ServerSide)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestDefaultedFieldsAreNotDrift(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	desired := f.desired(desiredYAML)
	liveObj := f.apply(desired, "capstan")
	// The live object has many defaulted fields the manifest lacks.
	if _, found, _ := unstructured.NestedFieldNoCopy(liveObj.Object, "spec", "strategy"); !found {
		t.Fatal("test premise: the API server defaults spec.strategy")
	}
	if r := f.diff(desired, liveObj); r.Modified {
		t.Errorf("a just-synced Deployment reads as modified:\npredicted %v\nlive %v", r.Predicted.Object, r.Live.Object)
	}
	if r := f.diff(desired, nil); !r.Modified {
		t.Error("a missing object reads as in sync")
	}
	// Fields another manager added, and the manifest does not set, are not drift.
	other := f.desired(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, annotations: {team: web}}}`)
	liveObj = f.apply(other, "someone-else")
	if r := f.diff(desired, liveObj); r.Modified {
		t.Error("an annotation added by another manager reads as drift")
	}
}

func TestDriftAndIgnoreDifferences(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	desired := f.desired(desiredYAML)
	f.apply(desired, "capstan")
	edit := f.desired(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.28}
      - {name: sidecar, image: busybox:1.36}
`)
	liveObj := f.apply(edit, "kubectl-edit")
	if r := f.diff(desired, liveObj); !r.Modified {
		t.Fatal("replicas and image changed by hand read as in sync")
	}
	replicas := v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}
	image := v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{`.spec.template.spec.containers[] | select(.name == "web") | .image`}}
	if r := f.diff(desired, liveObj, replicas); !r.Modified {
		t.Error("ignoring replicas hid the image change too")
	}
	if r := f.diff(desired, liveObj, replicas, image); r.Modified {
		t.Errorf("both changes ignored, still modified:\npredicted %v\nlive %v", r.Predicted.Object["spec"], r.Live.Object["spec"])
	}
	otherName := v1alpha1.ResourceIgnoreDifferences{Group: "apps", Kind: "Deployment", Name: "other", JSONPointers: []string{"/spec"}}
	if r := f.diff(desired, liveObj, otherName); !r.Modified {
		t.Error("a rule for another object applied")
	}

	// A field the manifest no longer sets is removed by a sync: drift.
	f.apply(desired, "capstan")
	liveObj, _ = f.client.Resource(deployments).Namespace(f.ns).Get(context.Background(), "web", metav1.GetOptions{})
	withoutTier := desired.DeepCopy()
	withoutTier.SetLabels(map[string]string{"app": "web"})
	if r := f.diff(withoutTier, liveObj); !r.Modified {
		t.Error("a label dropped from the manifest reads as in sync")
	}
}

func TestDryRunResultsAreCached(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	desired := f.desired(desiredYAML)
	liveObj := f.apply(desired, "capstan")
	f.diff(desired, liveObj)
	f.diff(desired, liveObj)
	if n := f.differ.cache.Len(); n != 1 {
		t.Errorf("%d dry-run results cached for one unchanged pair, want 1", n)
	}
	if _, err := f.differ.Diff(context.Background(), desired, liveObj, []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{".spec[["}}}, ServerSide); err == nil {
		t.Error("a malformed jq expression was accepted")
	}
}

// TestStaleResultsAreReplaced: a live object has one cached dry run per
// method, so the results of versions it has left are not kept (at 10,000
// apps, a commit touching all of them left 10,000 stale predictions).
func TestStaleResultsAreReplaced(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	desired := f.desired(desiredYAML)
	liveObj := f.apply(desired, "capstan")
	for i := range 3 {
		changed := desired.DeepCopy()
		changed.SetLabels(map[string]string{"app": "web", "round": fmt.Sprint(i)})
		if r := f.diff(changed, liveObj); !r.Modified {
			t.Fatalf("round %d: a new label reads as in sync", i)
		}
		liveObj = f.apply(changed, "capstan")
		f.differ.Record(changed, liveObj)
		if r := f.diff(changed, liveObj); r.Modified {
			t.Fatalf("round %d: the applied object reads as drift", i)
		}
	}
	if n := f.differ.cache.Len(); n != 1 {
		t.Errorf("%d results cached for one object after three changes, want 1", n)
	}
}

// TestImmutableChangeIsDrift: a change the API server refuses because a
// field is immutable is drift (which a forced sync resolves), not a
// failed comparison; any other refusal is still an error.
func TestImmutableChangeIsDrift(t *testing.T) {
	localcluster.Need(t)
	f := setup(t)
	live := f.applyTo(configMaps, f.desired("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {v: one}\n"), "test")
	r := f.diff(f.desired("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {v: two}\n"), live)
	if !r.Modified || r.Predicted == nil || r.Live == nil {
		t.Errorf("an immutable change: %+v", r)
	}
	if v, _, _ := unstructured.NestedString(r.Predicted.Object, "data", "v"); v != "two" {
		t.Errorf("predicted v = %q, want the desired two", v)
	}
	plain := f.applyTo(configMaps, f.desired("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {v: one}\n"), "test")
	bad := f.desired("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {'not a key!': x}\n")
	if _, err := f.differ.Diff(context.Background(), bad, plain, nil, ServerSide); err == nil {
		t.Error("an invalid object compared without error")
	}
}
