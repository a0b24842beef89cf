package kustomize

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// kustomizeBin is Kustomize's own CLI, which `make kustomize` builds.
func kustomizeBin(t *testing.T) string {
	return toolbin.Find(t, "CAPSTAN_KUSTOMIZE_BIN", "bin/kustomize/kustomize", "kustomize")
}

// TestBinary: with a registered Kustomize program, the build is that
// program's (its version shows in the managed-by label its build option
// adds), with the source's overrides and the build environment, and the
// checkout is left as it was.
func TestBinary(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"base/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n",
		"base/kustomization.yaml":  "resources: [cm.yaml]\n",
		"app/kustomization.yaml":   "resources: [../base, deploy.yaml]\n",
		"app/deploy.yaml":          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx:1.0}]}\n",
		"app/.argocd-source.yaml":  "kustomize: {namePrefix: ignored-}\n", // read by the repo layer, not here
		"app/generated/.gitignore": "*\n",
	})
	before := listTree(t, root)
	opts := &v1alpha1.ApplicationSourceKustomize{NamePrefix: "prod-", Images: v1alpha1.KustomizeImages{"nginx=nginx:2.0"},
		CommonAnnotations: map[string]string{"app": "${ARGOCD_APP_NAME}"}, CommonAnnotationsEnvsubst: true}
	in := Input{Root: root, Path: "app", Kustomize: opts, Env: map[string]string{"ARGOCD_APP_NAME": "shop"},
		Binary: &Binary{Path: kustomizeBin(t), Args: []string{"--enable-managedby-label"}}}
	got, err := Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	deploy := find(t, got, "Deployment", "prod-web")
	find(t, got, "ConfigMap", "prod-settings")
	if l := deploy.GetLabels()["app.kubernetes.io/managed-by"]; l != "kustomize-v5.8.0" {
		t.Errorf("managed-by %q: not built by the registered program", l)
	}
	if a := deploy.GetAnnotations()["app"]; a != "shop" {
		t.Errorf("annotation app = %q, want the build environment's shop", a)
	}
	if cs, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers"); len(cs) != 1 || cs[0].(map[string]any)["image"] != "nginx:2.0" {
		t.Errorf("containers %v: the image override did not apply", cs)
	}
	if after := listTree(t, root); !reflect.DeepEqual(before, after) {
		t.Errorf("the build changed the checkout: %v, then %v", before, after)
	}

	in.Binary.Args = []string{"--no-such-flag"}
	if _, err := Render(context.Background(), in); err == nil || !strings.Contains(err.Error(), "unknown flag: --no-such-flag") {
		t.Errorf("a failing program: %v, want its message", err)
	}
}
