package kustomize

import (
	"context"
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

const root = "testdata/repo"

func byKind(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	t.Fatalf("no %s among %d objects", kind, len(objs))
	return nil
}

func str(obj *unstructured.Unstructured, fields ...string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	s, _ := v.(string)
	return s
}

func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("want one container, got %v", cs)
	}
	return cs[0].(map[string]any)
}

func TestRenderWithoutOverrides(t *testing.T) {
	objs, err := Render(context.Background(), Input{Root: root, Path: "overlays/prod"})
	if err != nil {
		t.Fatal(err)
	}
	d := byKind(t, objs, "Deployment")
	if d.GetName() != "prod-web" || d.GetLabels()["env"] != "prod" {
		t.Errorf("deployment %s labels %v", d.GetName(), d.GetLabels())
	}
	c := container(t, d)
	if c["image"] != "nginx:1.25" {
		t.Errorf("image = %v, want the base's override nginx:1.25", c["image"])
	}
	if mem, _, _ := unstructured.NestedString(c, "resources", "limits", "memory"); mem != "256Mi" {
		t.Errorf("patch from the overlay not applied: memory = %q", mem)
	}
}

func TestRenderWithApplicationOverrides(t *testing.T) {
	before, _ := os.ReadFile(root + "/overlays/prod/kustomization.yaml")
	opts := &v1alpha1.ApplicationSourceKustomize{
		NamePrefix:                "team-",
		NameSuffix:                "-v2",
		Namespace:                 "shop",
		Images:                    v1alpha1.KustomizeImages{"nginx=registry.example.com/nginx:1.27"},
		CommonLabels:              map[string]string{"team": "payments"},
		CommonAnnotations:         map[string]string{"owner": "${ARGOCD_APP_NAME}"},
		CommonAnnotationsEnvsubst: true,
		Replicas:                  v1alpha1.KustomizeReplicas{{Name: "web", Count: intstr.FromString("3")}},
		Patches: v1alpha1.KustomizePatches{{
			Target: &v1alpha1.KustomizeSelector{KustomizeResID: v1alpha1.KustomizeResID{KustomizeGvk: v1alpha1.KustomizeGvk{Kind: "Deployment"}}},
			Patch:  "- op: add\n  path: /spec/template/spec/containers/0/imagePullPolicy\n  value: Always\n",
		}},
		Components: []string{"../../components/metrics"},
	}
	objs, err := Render(context.Background(), Input{Root: root, Path: "overlays/prod", Kustomize: opts, Env: map[string]string{"ARGOCD_APP_NAME": "shop-prod"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
		if o.GetLabels()["team"] != "payments" || o.GetAnnotations()["owner"] != "shop-prod" {
			t.Errorf("%s: labels %v annotations %v", o.GetName(), o.GetLabels(), o.GetAnnotations())
		}
	}
	sort.Strings(names)
	want := []string{"ConfigMap/shop/team-metrics-config-v2", "Deployment/shop/team-web-v2", "Service/shop/team-web-v2"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("objects = %v, want %v", names, want)
	}
	d := byKind(t, objs, "Deployment")
	c := container(t, d)
	if c["image"] != "registry.example.com/nginx:1.27" || c["imagePullPolicy"] != "Always" {
		t.Errorf("container = %v", c)
	}
	if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 3 {
		t.Errorf("replicas = %d, want 3", r)
	}
	if sel := str(d, "spec", "selector", "matchLabels", "team"); sel != "payments" {
		t.Errorf("commonLabels not added to the selector: %q", sel)
	}

	after, _ := os.ReadFile(root + "/overlays/prod/kustomization.yaml")
	if string(before) != string(after) {
		t.Error("rendering changed the kustomization on disk")
	}
}

func TestLabelsWithoutSelectorAndConflicts(t *testing.T) {
	objs, err := Render(context.Background(), Input{Root: root, Path: "base", Kustomize: &v1alpha1.ApplicationSourceKustomize{
		CommonLabels: map[string]string{"team": "a"}, LabelWithoutSelector: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	d := byKind(t, objs, "Deployment")
	if d.GetLabels()["team"] != "a" || str(d, "spec", "selector", "matchLabels", "team") != "" {
		t.Errorf("labelWithoutSelector: labels %v, selector %v", d.GetLabels(), d.Object["spec"].(map[string]any)["selector"])
	}

	conflict := &v1alpha1.ApplicationSourceKustomize{CommonLabels: map[string]string{"env": "staging"}}
	if _, err := Render(context.Background(), Input{Root: root, Path: "overlays/prod", Kustomize: conflict}); err == nil || !strings.Contains(err.Error(), `label "env" already`) {
		t.Errorf("existing label without force: got %v", err)
	}
	conflict.ForceCommonLabels = true
	objs, err = Render(context.Background(), Input{Root: root, Path: "overlays/prod", Kustomize: conflict})
	if err != nil {
		t.Fatal(err)
	}
	if byKind(t, objs, "Service").GetLabels()["env"] != "staging" {
		t.Error("forceCommonLabels did not overwrite env")
	}
}

func TestMissingComponentsAndBadInput(t *testing.T) {
	opts := &v1alpha1.ApplicationSourceKustomize{Components: []string{"../../components/missing"}}
	if _, err := Render(context.Background(), Input{Root: root, Path: "overlays/prod", Kustomize: opts}); err == nil {
		t.Error("a missing component was accepted")
	}
	opts.IgnoreMissingComponents = true
	if _, err := Render(context.Background(), Input{Root: root, Path: "overlays/prod", Kustomize: opts}); err != nil {
		t.Errorf("ignoreMissingComponents: %v", err)
	}
	if _, err := Render(context.Background(), Input{Root: root, Path: "../.."}); !errors.Is(err, pathsafe.ErrOutOfBounds) {
		t.Errorf("path outside the repository: got %v", err)
	}
	if _, err := Render(context.Background(), Input{Root: root, Path: "escape"}); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Errorf("resources outside the repository: got %v", err)
	}
	if _, err := Render(context.Background(), Input{Root: root, Path: "components"}); err == nil || !strings.Contains(err.Error(), "no kustomization") {
		t.Errorf("directory without a kustomization: got %v", err)
	}
}

func TestParseImage(t *testing.T) {
	for in, want := range map[string]string{
		"nginx:1.27":                              "nginx||1.27|",
		"nginx=registry.example.com/nginx:1.27":   "nginx|registry.example.com/nginx|1.27|",
		"nginx@sha256:abc":                        "nginx|||sha256:abc",
		"nginx=other@sha256:abc":                  "nginx|other||sha256:abc",
		"localhost:5000/app:v1":                   "localhost:5000/app||v1|",
		"localhost:5000/app":                      "localhost:5000/app|||",
		"asia.gcr.io/p/img=asia.gcr.io/p/img:abc": "asia.gcr.io/p/img|asia.gcr.io/p/img|abc|",
	} {
		img := parseImage(in)
		if got := strings.Join([]string{img.Name, img.NewName, img.NewTag, img.Digest}, "|"); got != want {
			t.Errorf("parseImage(%q) = %s, want %s", in, got, want)
		}
	}
}
