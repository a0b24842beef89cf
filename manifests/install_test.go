package manifests_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunTests(m, localcluster.Options{Workloads: true}, &cluster))
}

// readObjects reads the objects of a multi-document YAML file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// TestInstallFilesApply server-side applies each install file, with strict
// field validation, into a namespace of its own, twice (an upgrade in
// place changes nothing), and checks the workloads get their pods.
func TestInstallFilesApply(t *testing.T) {
	localcluster.Need(t)
	for _, file := range []string{"install.yaml", "namespace-install.yaml", "core-install.yaml", "ha/install.yaml"} {
		t.Run(file, func(t *testing.T) {
			ns := cluster.NewNamespace(t)
			objs := readObjects(t, file)
			for range 2 {
				apply(t, cluster, objs, ns)
			}
			waitPods(t, ns, objs)
		})
	}
}

// apply applies objs to cl in order, CRDs first and waited for,
// namespaced objects into ns.
func apply(t *testing.T, cl *localcluster.Cluster, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	ctx := context.Background()
	first, rest := splitCRDs(objs)
	if len(first) > 0 {
		applyAll(t, ctx, cl, first, ns)
		if err := kube.WaitForCRDs(ctx, cl.Config, kube.PrepareOptions{Namespace: ns}); err != nil {
			t.Fatal(err)
		}
	} else if err := kube.InstallCRDs(ctx, cl.Config); err != nil { // installed apart, as namespace-install says
		t.Fatal(err)
	}
	applyAll(t, ctx, cl, rest, ns)
}

func splitCRDs(objs []*unstructured.Unstructured) (crds, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	return crds, rest
}

func applyAll(t *testing.T, ctx context.Context, cl *localcluster.Cluster, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	c, err := kube.NewClient(cl.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		o = o.DeepCopy()
		if namespaced, err := c.IsObjectNamespaced(o); err != nil {
			t.Fatalf("%s/%s: %v", o.GetKind(), o.GetName(), err)
		} else if namespaced {
			o.SetNamespace(ns)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Patch(ctx, o, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner("install-test"), client.ForceOwnership,
			client.FieldValidation("Strict")); err != nil {
			t.Errorf("applying %s/%s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// waitPods waits until every Deployment and StatefulSet in objs has all
// its replicas' pods created.
func waitPods(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	localcluster.Need(t)
	t.Helper()
	cs, err := cluster.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range objs {
		if o.GetKind() != "Deployment" && o.GetKind() != "StatefulSet" {
			continue
		}
		want := int64(1)
		switch n := o.Object["spec"].(map[string]any)["replicas"].(type) {
		case int64:
			want = n
		case float64:
			want = int64(n)
		}
		eventually.Within(t, eventually.Options{Interval: 200 * time.Millisecond}, fmt.Sprintf("%s/%s's %d pods", o.GetKind(), o.GetName(), want), func() string {
			var got int32
			switch o.GetKind() {
			case "Deployment":
				d, err := cs.AppsV1().Deployments(ns).Get(ctx, o.GetName(), metav1.GetOptions{})
				if err != nil {
					return err.Error()
				}
				got = d.Status.Replicas
			case "StatefulSet":
				s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, o.GetName(), metav1.GetOptions{})
				if err != nil {
					return err.Error()
				}
				got = s.Status.Replicas
			}
			if int64(got) != want {
				return fmt.Sprintf("%d pods", got)
			}
			return ""
		})
	}
}

// notInstalled are parts of the names of Argo CD's objects that Capstan's
// install leaves out, each with why; the list only shrinks.
var notInstalled = map[string]string{
	"redis-ha": "HA keeps one Redis without Sentinel: it holds only a rebuildable cache",
}

// TestSameObjectsAsArgoCD: every object Argo CD's install files create has
// its namesake in Capstan's (same kind, same name), but for notInstalled.
func TestSameObjectsAsArgoCD(t *testing.T) {
	dir := argoManifests(t)
	for _, file := range []string{"install.yaml", "namespace-install.yaml", "core-install.yaml", "ha/install.yaml"} {
		t.Run(file, func(t *testing.T) {
			ours := map[string]bool{}
			for _, o := range readObjects(t, file) {
				ours[o.GetKind()+"/"+o.GetName()] = true
			}
			for _, o := range readObjects(t, filepath.Join(dir, file)) {
				key := o.GetKind() + "/" + o.GetName()
				if !ours[key] && !left(o.GetName()) {
					t.Errorf("%s: Argo CD's %s has it, Capstan's does not", key, file)
				}
			}
		})
	}
}

func left(name string) bool {
	for part := range notInstalled {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}
