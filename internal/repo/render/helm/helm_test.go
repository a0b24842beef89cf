package helm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

const charts = "testdata/charts"

// helmBin is the helm CLI built from the same Helm module Capstan links, so
// that the comparison checks Capstan's use of the SDK, not Helm versions.
var helmBin string

func TestMain(m *testing.M) {
	os.Exit(toolbin.RunWith(m, "helm.sh/helm/v3/cmd/helm", &helmBin))
}

// helmTemplate runs `helm template` with the flags Argo CD would pass for in.
func helmTemplate(t *testing.T, in Input) ([]*unstructured.Unstructured, error) {
	t.Helper()
	h := in.Helm
	if h == nil {
		h = &v1alpha1.ApplicationSourceHelm{}
	}
	chartDir := filepath.Join(in.Root, in.Path)
	args := []string{"template", cmp.Or(h.ReleaseName, in.AppName), chartDir, "--namespace", cmp.Or(h.Namespace, in.Namespace, "default")}
	if !h.SkipCrds {
		args = append(args, "--include-crds")
	}
	if h.SkipTests {
		args = append(args, "--skip-tests")
	}
	if kv := cmp.Or(h.KubeVersion, in.KubeVersion); kv != "" {
		args = append(args, "--kube-version", kv)
	}
	for _, api := range append(append([]string{}, in.APIVersions...), h.APIVersions...) {
		args = append(args, "--api-versions", api)
	}
	for _, vf := range h.ValueFiles {
		args = append(args, "-f", filepath.Join(chartDir, vf))
	}
	if h.Values != "" {
		f := filepath.Join(t.TempDir(), "inline.yaml")
		if err := os.WriteFile(f, []byte(h.Values), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-f", f)
	}
	for _, p := range h.Parameters {
		flag := "--set"
		if p.ForceString {
			flag = "--set-string"
		}
		args = append(args, flag, p.Name+"="+escapeCommas(p.Value))
	}
	for _, fp := range h.FileParameters {
		args = append(args, "--set-file", fp.Name+"="+filepath.Join(chartDir, fp.Path))
	}
	cmd := exec.Command(helmBin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.New(strings.TrimSpace(stderr.String()))
	}
	return manifest.Parse("helm template", stdout.Bytes())
}

func canonical(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		data, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

func TestRenderEqualsHelmTemplate(t *testing.T) {
	prod := &v1alpha1.ApplicationSourceHelm{
		ValueFiles: []string{"values-prod.yaml"},
		Parameters: []v1alpha1.HelmParameter{
			{Name: "service.type", Value: "NodePort"},
			{Name: "service.nodePort", Value: "30080"},
			{Name: "image.tag", Value: "1.27", ForceString: true},
		},
	}
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"conditionals defaults", Input{Path: "conditionals"}},
		{"conditionals prod values and parameters", Input{Path: "conditionals", Helm: prod}},
		{"conditionals inline values", Input{Path: "conditionals", Helm: &v1alpha1.ApplicationSourceHelm{
			Values: "service:\n  type: LoadBalancer\nimage:\n  tag: \"3.0\"\n", ReleaseName: "conditionals-web"}}},
		{"loops", Input{Path: "loops", Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{
			{Name: "appProtocol", Value: "http"}, {Name: "env.GREETING", Value: "a,b,c"}}}}},
		{"parent with subchart", Input{Path: "parent"}},
		{"parent overriding subchart values", Input{Path: "parent", Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{
			{Name: "child.message", Value: "overridden"}, {Name: "global.environment", Value: "prod"}, {Name: "child.replicas", Value: "5"}}}}},
		{"parent with subchart disabled", Input{Path: "parent", Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{
			{Name: "child.enabled", Value: "false"}}}}},
		{"crds and hooks", Input{Path: "crds-hooks"}},
		{"crds skipped and tests skipped", Input{Path: "crds-hooks", Helm: &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true}}},
		{"capabilities of a new cluster", Input{Path: "capabilities", KubeVersion: "1.30.0", APIVersions: []string{"monitoring.coreos.com/v1", "policy/v1/PodDisruptionBudget"}}},
		{"capabilities of an old cluster", Input{Path: "capabilities", KubeVersion: "1.22.0"}},
		{"file parameter and namespace", Input{Path: "capabilities", Helm: &v1alpha1.ApplicationSourceHelm{
			Namespace: "other", FileParameters: []v1alpha1.HelmFileParameter{{Name: "password", Path: "values.yaml"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Root, in.AppName, in.Namespace = charts, "demo", "prod"
			got, err := Render(context.Background(), in)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			want, err := helmTemplate(t, in)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			g, w := canonical(t, got), canonical(t, want)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Render differs from helm template:\n got %d objects:\n%s\nwant %d objects:\n%s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
			}
			if len(g) == 0 {
				t.Error("rendered nothing")
			}
		})
	}
}

func TestHooksKeepTheirAnnotations(t *testing.T) {
	objs, err := Render(context.Background(), Input{Root: charts, Path: "crds-hooks", AppName: "demo", Namespace: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[string]string{}
	for _, o := range objs {
		if h := o.GetAnnotations()["helm.sh/hook"]; h != "" {
			hooks[o.GetName()] = h
		}
	}
	want := map[string]string{"demo-migrate": "pre-install,pre-upgrade", "demo-notify": "post-install,post-upgrade", "demo-test": "test"}
	if !reflect.DeepEqual(hooks, want) {
		t.Errorf("hooks = %v, want %v", hooks, want)
	}
}

func TestValuesObjectWinsOverValues(t *testing.T) {
	objs, err := Render(context.Background(), Input{Root: charts, Path: "conditionals", AppName: "demo", Helm: &v1alpha1.ApplicationSourceHelm{
		Values:       "replicaCount: 2\n",
		ValuesObject: &runtime.RawExtension{Raw: []byte(`{"replicaCount": 7}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if r, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); r != 7 {
				t.Errorf("replicas = %d, want 7 from valuesObject", r)
			}
			return
		}
	}
	t.Fatal("no Deployment rendered")
}

func TestErrorsAndBounds(t *testing.T) {
	render := func(h *v1alpha1.ApplicationSourceHelm, refs map[string]string) error {
		_, err := Render(context.Background(), Input{Root: charts, Path: "conditionals", AppName: "demo", Helm: h, Refs: refs})
		return err
	}
	err := render(&v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "ingress.enabled", Value: "true"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "ingress.host is required when ingress is enabled") {
		t.Errorf("required value: got %v, want Helm's message verbatim", err)
	}
	for _, vf := range []string{"../../../../../../etc/passwd", "/etc/passwd", "$other/x.yaml"} {
		if err := render(&v1alpha1.ApplicationSourceHelm{ValueFiles: []string{vf}}, nil); err == nil {
			t.Errorf("value file %q accepted", vf)
		} else if vf != "$other/x.yaml" && !errors.Is(err, pathsafe.ErrOutOfBounds) {
			t.Errorf("value file %q: got %v, want ErrOutOfBounds", vf, err)
		}
	}
	if err := render(&v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"missing.yaml"}}, nil); err == nil {
		t.Error("missing value file accepted")
	}
	if err := render(&v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"missing.yaml"}, IgnoreMissingValueFiles: true}, nil); err != nil {
		t.Errorf("ignoreMissingValueFiles: %v", err)
	}
	// $values/ refers to another source's checkout.
	objs, err := Render(context.Background(), Input{Root: charts, Path: "conditionals", AppName: "demo",
		Refs: map[string]string{"values": filepath.Join(charts, "conditionals")},
		Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/values-prod.yaml"}}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
	}
	if !kinds["Ingress"] || !kinds["HorizontalPodAutoscaler"] {
		t.Errorf("$values value file not applied: kinds %v", kinds)
	}
}

// BenchmarkRenderInProcess and BenchmarkHelmTemplateProcess render the same
// chart with the same values, in-process and with the helm executable.
func BenchmarkRenderInProcess(b *testing.B) {
	in := Input{Root: charts, Path: "conditionals", AppName: "demo", Namespace: "prod", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}}}
	for b.Loop() {
		if _, err := Render(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHelmTemplateProcess(b *testing.B) {
	home := b.TempDir()
	for b.Loop() {
		cmd := exec.Command(helmBin, "template", "demo", filepath.Join(charts, "conditionals"), "--namespace", "prod", "--include-crds", "-f", filepath.Join(charts, "conditionals", "values-prod.yaml"))
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := manifest.Parse("helm template", out); err != nil {
			b.Fatal(err)
		}
	}
}
