package kustomize

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseBuildOptions(t *testing.T) {
	tests := []struct {
		in   string
		want BuildOptions
		err  string
	}{
		{"", BuildOptions{}, ""},
		{"--load-restrictor LoadRestrictionsNone", BuildOptions{LoadRestrictionsNone: true}, ""},
		{"--load-restrictor=LoadRestrictionsNone --reorder none --enable-managedby-label", BuildOptions{LoadRestrictionsNone: true, Reorder: "none", ManagedByLabel: true}, ""},
		{"--load-restrictor", BuildOptions{}, "needs a value"},
		{"--load-restrictor Anything", BuildOptions{}, "want LoadRestrictionsRootOnly or LoadRestrictionsNone"},
		{"--enable-helm", BuildOptions{Helm: HelmOptions{Enabled: true}}, ""},
		{"--enable-helm --helm-kube-version 1.29.0 --helm-api-versions a/v1,b/v1 --helm-api-versions=c/v1 --helm-debug",
			BuildOptions{Helm: HelmOptions{Enabled: true, KubeVersion: "1.29.0", APIVersions: []string{"a/v1", "b/v1", "c/v1"}}}, ""},
		{"--enable-helm --helm-command /usr/local/bin/helm", BuildOptions{}, "--helm-command is not supported"},
		{"--enable-alpha-plugins --enable-exec", BuildOptions{}, "--enable-alpha-plugins is not supported"},
	}
	for _, tt := range tests {
		got, err := ParseBuildOptions(tt.in)
		if (tt.err == "" && err != nil) || (tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err))) || (err == nil && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("%q: %+v, %v; want %+v, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestLoadRestrictorNone: a kustomization that takes a file from beside
// its directory builds only with --load-restrictor LoadRestrictionsNone,
// and even then never reads outside the checkout.
func TestLoadRestrictorNone(t *testing.T) {
	root := t.TempDir()
	for path, content := range map[string]string{
		"shared/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n",
		"app/kustomization.yaml":    "resources: [../shared/cm.yaml]\n",
		"escape/kustomization.yaml": "resources: [../../outside.yaml]\n",
	} {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "outside.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Render(ctx, Input{Root: root, Path: "app"}); err == nil {
		t.Error("a file beside the kustomization was read by default")
	}
	objs, err := Render(ctx, Input{Root: root, Path: "app", Build: BuildOptions{LoadRestrictionsNone: true}})
	if err != nil || len(objs) != 1 || objs[0].GetName() != "shared" {
		t.Fatalf("with LoadRestrictionsNone: %v %v", objs, err)
	}
	if _, err := Render(ctx, Input{Root: root, Path: "escape", Build: BuildOptions{LoadRestrictionsNone: true}}); err == nil {
		t.Error("a file outside the checkout was read")
	}
}
