package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	// Workloads: pods run on a kwok node, which port forwards reach.
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &cluster))
}

var installOnce struct {
	sync.Once
	err error
}

// installed installs the CRDs once for the whole package.
func installed(t *testing.T) {
	localcluster.Need(t)
	t.Helper()
	installOnce.Do(func() { installOnce.err = InstallCRDs(context.Background(), cluster.Config) })
	if installOnce.err != nil {
		t.Fatalf("installing CRDs: %v", installOnce.err)
	}
}

// readFixture returns every object in testdata/name.
func readFixture(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decoding %s: %v", name, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// apply server-side applies obj into namespace ns and returns the live object.
func apply(t *testing.T, obj *unstructured.Unstructured, ns string) (*unstructured.Unstructured, error) {
	localcluster.Need(t)
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	gvk := obj.GroupVersionKind()
	gvr := map[schema.GroupVersionKind]schema.GroupVersionResource{
		v1alpha1.ApplicationGVK:                      v1alpha1.GroupVersion.WithResource("applications"),
		v1alpha1.AppProjectGVK:                       v1alpha1.GroupVersion.WithResource("appprojects"),
		corev1.SchemeGroupVersion.WithKind("Secret"): corev1.SchemeGroupVersion.WithResource("secrets"),
	}[gvk]
	if gvr.Resource == "" {
		t.Fatalf("no resource known for %s", gvk)
	}
	obj = obj.DeepCopy()
	obj.SetNamespace(ns)
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	force := true
	return dyn.Resource(gvr).Namespace(ns).Patch(context.Background(), obj.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "capstan-test", Force: &force})
}

// normalize round-trips v through JSON so numbers compare alike.
func normalize(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInstallCRDsIsIdempotentAndServesArgoCDNames(t *testing.T) {
	localcluster.Need(

		// A second install of the same CRDs changes nothing and does not fail.
		t)
	installed(t)

	if err := InstallCRDs(context.Background(), cluster.Config); err != nil {
		t.Fatalf("second install: %v", err)
	}
	cs := apiextensionsclient.NewForConfigOrDie(cluster.Config)
	for name, shortNames := range map[string][]string{
		"applications.argoproj.io": {"app", "apps"},
		"appprojects.argoproj.io":  {"appproj", "appprojs"},
	} {
		crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(crd.Spec.Names.ShortNames, shortNames) {
			t.Errorf("%s short names = %v, want %v", name, crd.Spec.Names.ShortNames, shortNames)
		}
		// As in Argo CD's CRDs: the controller writes status with the
		// object, so an operation's result and its clearing are one write.
		if v := crd.Spec.Versions[0]; v.Subresources != nil && v.Subresources.Status != nil {
			t.Errorf("%s has a status subresource; Argo CD's has none", name)
		}
	}
	app, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), "applications.argoproj.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range app.Spec.Versions[0].AdditionalPrinterColumns {
		columns = append(columns, c.Name+"="+c.JSONPath)
	}
	want := []string{"Sync Status=.status.sync.status", "Health Status=.status.health.status", "Revision=.status.sync.revision", "Project=.spec.project"}
	if !reflect.DeepEqual(columns, want) {
		t.Errorf("printer columns = %v, want %v", columns, want)
	}
}

// TestSeedApplicationsRoundTrip applies the Applications of seeds 002 and 004
// and a kitchen-sink Application, and reads them back: no annotation and no
// spec field may be lost, by the schema or by the Go types.
func TestSeedApplicationsRoundTrip(t *testing.T) {
	localcluster.Need(t)
	installed(t)
	ns := cluster.NewNamespace(t)
	c, err := NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, fixture := range []string{"image-updater-helm-application.yaml", "image-updater-kustomize-applications.yaml", "full-application.yaml"} {
		for _, want := range readFixture(t, fixture) {
			t.Run(want.GetName(), func(t *testing.T) {
				live, err := apply(t, want, ns)
				if err != nil {
					t.Fatalf("applying %s: %v", want.GetName(), err)
				}
				if got := live.GetAnnotations(); !reflect.DeepEqual(got, want.GetAnnotations()) && len(want.GetAnnotations()) > 0 {
					t.Errorf("annotations changed:\n got %v\nwant %v", got, want.GetAnnotations())
				}
				for _, field := range []string{"spec", "operation"} {
					if g, w := normalize(t, live.Object[field]), normalize(t, want.Object[field]); !reflect.DeepEqual(g, w) {
						t.Errorf("%s changed by the API server:\n got %v\nwant %v", field, g, w)
					}
				}

				// The Go types know every field of the fixture...
				data, _ := json.Marshal(want.Object)
				var typedWant v1alpha1.Application
				if err := yaml.UnmarshalStrict(data, &typedWant); err != nil {
					t.Fatalf("fixture has fields the Go types lack: %v", err)
				}
				// ...and read back the same through the typed client.
				var typed v1alpha1.Application
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: want.GetName()}, &typed); err != nil {
					t.Fatal(err)
				}
				if !equality.Semantic.DeepEqual(typed.Spec, typedWant.Spec) {
					t.Errorf("typed spec differs:\n got %+v\nwant %+v", typed.Spec, typedWant.Spec)
				}
				if !equality.Semantic.DeepEqual(typed.Operation, typedWant.Operation) {
					t.Errorf("typed operation differs:\n got %+v\nwant %+v", typed.Operation, typedWant.Operation)
				}
				if !reflect.DeepEqual(typed.Annotations, want.GetAnnotations()) && len(want.GetAnnotations()) > 0 {
					t.Errorf("typed annotations differ: %v", typed.Annotations)
				}
			})
		}
	}
}

// TestClusterSecretAndProject applies a cluster Secret as `argocd cluster add` writes it and an
// AppProject that deploys to it.
func TestClusterSecretAndProject(t *testing.T) {
	localcluster.Need(t)
	installed(t)
	ns := cluster.NewNamespace(t)
	c, err := NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	var project *unstructured.Unstructured
	for _, obj := range readFixture(t, "cluster-secret.yaml") {
		if _, err := apply(t, obj, ns); err != nil {
			t.Fatalf("applying %s/%s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if obj.GetKind() == v1alpha1.AppProjectKind {
			project = obj
		}
	}

	var secret corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cluster-api.cluster.production-358811194"}, &secret); err != nil {
		t.Fatal(err)
	}
	if secret.Labels[v1alpha1.LabelSecretType] != v1alpha1.SecretTypeCluster {
		t.Errorf("secret-type label = %q", secret.Labels[v1alpha1.LabelSecretType])
	}
	wantData := map[string]string{
		"config": `{"bearerToken":"xxxxxxxxxxxxx","tlsClientConfig":{"insecure":true}}`,
		"name":   "default/api-cluster-production:6443/admin",
		"server": "https://api.cluster.production:6443",
	}
	for k, v := range wantData {
		if got := string(secret.Data[k]); got != v {
			t.Errorf("secret data %s = %q, want %q", k, got, v)
		}
	}

	var proj v1alpha1.AppProject
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "production"}, &proj); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(project.Object)
	var want v1alpha1.AppProject
	if err := yaml.UnmarshalStrict(data, &want); err != nil {
		t.Fatalf("fixture has fields the Go types lack: %v", err)
	}
	if !equality.Semantic.DeepEqual(proj.Spec, want.Spec) {
		t.Errorf("project spec differs:\n got %+v\nwant %+v", proj.Spec, want.Spec)
	}
	if len(proj.Spec.Destinations) != 2 || proj.Spec.Destinations[0].Server != wantData["server"] {
		t.Errorf("destinations = %+v", proj.Spec.Destinations)
	}
}

// TestMalformedApplicationsAreRejected checks that the schema refuses
// Applications with fields of the wrong type or missing required fields, and
// that the error names the field.
func TestMalformedApplicationsAreRejected(t *testing.T) {
	localcluster.Need(t)
	installed(t)
	ns := cluster.NewNamespace(t)
	base := readFixture(t, "image-updater-kustomize-applications.yaml")[1]
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	apps := v1alpha1.GroupVersion.WithResource("applications")

	for _, tc := range []struct {
		name      string
		mutate    func(obj map[string]any)
		wantField string
	}{
		{"destination is a string", func(o map[string]any) {
			o["spec"].(map[string]any)["destination"] = "https://kubernetes.default.svc"
		}, "spec.destination"},
		{"prune is a string", func(o map[string]any) {
			o["spec"].(map[string]any)["syncPolicy"] = map[string]any{"automated": map[string]any{"prune": "yes"}}
		}, "spec.syncPolicy.automated.prune"},
		{"revisionHistoryLimit is a word", func(o map[string]any) {
			o["spec"].(map[string]any)["revisionHistoryLimit"] = "ten"
		}, "spec.revisionHistoryLimit"},
		{"project missing", func(o map[string]any) {
			delete(o["spec"].(map[string]any), "project")
		}, "spec.project"},
		{"source without repoURL", func(o map[string]any) {
			delete(o["spec"].(map[string]any)["source"].(map[string]any), "repoURL")
		}, "spec.source.repoURL"},
		{"helm parameters not a list", func(o map[string]any) {
			o["spec"].(map[string]any)["source"].(map[string]any)["helm"] = map[string]any{"parameters": map[string]any{"image.tag": "v1"}}
		}, "spec.source.helm.parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := base.DeepCopy()
			obj.SetName("bad-" + strings.ReplaceAll(tc.name, " ", "-"))
			tc.mutate(obj.Object)
			obj.SetNamespace(ns)

			// A create (kubectl create, client-side apply) gets 422 Invalid from the schema.
			_, err := dyn.Resource(apps).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{})
			if err == nil {
				t.Fatal("malformed Application was created")
			}
			if !apierrors.IsInvalid(err) {
				t.Errorf("create error is not Invalid (422): %v", err)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("create error does not name %s: %v", tc.wantField, err)
			}

			// A server-side apply fails too, naming the field (the API server
			// reports type mismatches in apply patches as 500, not 422).
			if _, err := apply(t, obj, ns); err == nil {
				t.Fatal("malformed Application was applied")
			} else if !strings.Contains(err.Error(), strings.TrimPrefix(tc.wantField, "spec.")) {
				t.Errorf("apply error does not name %s: %v", tc.wantField, err)
			}
		})
	}
}

// TestStatusIsWrittenWithTheObject checks that status is part of the
// object, as in Argo CD's CRD (no status subresource), and that a user
// applying a spec with server-side apply leaves it alone.
func TestStatusIsWrittenWithTheObject(t *testing.T) {
	localcluster.Need(t)
	installed(t)
	ns := cluster.NewNamespace(t)
	c, err := NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     v1alpha1.DefaultAppProjectName,
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "."},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "a"},
		},
	}
	ctx := context.Background()
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	app.Status.Health.Status = v1alpha1.HealthStatusHealthy
	app.Status.Sync.Revision = "0123456789abcdef0123456789abcdef01234567"
	if err := c.Update(ctx, app); err != nil {
		t.Fatalf("status update: %v", err)
	}

	// kubectl apply --server-side of the spec alone leaves status alone.
	applied := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.ApplicationKind,
		"metadata": map[string]any{"name": "status", "namespace": ns},
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": "https://git.example.com/a.git", "path": "."},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "a"},
			"info":        []any{map[string]any{"name": "k", "value": "v"}},
		},
	}}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.Application
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || got.Status.Health.Status != v1alpha1.HealthStatusHealthy {
		t.Errorf("status = %+v, want Synced/Healthy as written", got.Status)
	}
	if len(got.Spec.Info) != 1 {
		t.Errorf("spec update lost: %+v", got.Spec.Info)
	}
}
