package kustomize

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/testing/chartserver"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// helmBin is Helm's own CLI, built from the Helm module Capstan links.
var helmBin string

func TestMain(m *testing.M) {
	// Run as a build's helm, this test binary relays as Capstan's does.
	if IsHelmRelay(os.Args[0]) {
		os.Exit(RunHelmRelay(os.Args[0], os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(toolbin.RunWith(m, "helm.sh/helm/v3/cmd/helm", &helmBin))
}

// webChart is a chart that shows what it was given: values, release,
// namespace, capabilities, CRDs and a test hook.
var webChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.2.0\n",
	"values.yaml": "replicas: 1\ncolor: red\n",
	"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  namespace: {{ .Release.Namespace }}
  annotations:
    kube-version: {{ .Capabilities.KubeVersion.Version | quote }}
    has-example: {{ .Capabilities.APIVersions.Has "example.com/v1" | quote }}
    color: {{ .Values.color }}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
	"templates/test.yaml":   "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-test\n  annotations: {helm.sh/hook: test}\nspec: {containers: [{name: t, image: busybox}]}\n",
	"crds/widgets.yaml":     "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n",
	"templates/NOTES.txt":   "thanks\n",
	"templates/_helper.tpl": "{{- define \"web.name\" -}}web{{- end -}}\n",
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func withPrefix(prefix string, files map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range files {
		out[prefix+p] = c
	}
	return out
}

// kustomizeWithHelm builds dir as `kustomize build --enable-helm` does
// with Helm's own CLI.
func kustomizeWithHelm(t *testing.T, dir, kubeVersion string, apis []string) []*unstructured.Unstructured {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig.HelmConfig = types.HelmConfig{Enabled: true, Command: helmBin, KubeVersion: kubeVersion, ApiVersions: apis}
	objs, err := run(filesys.MakeFsOnDisk(), dir, opts)
	if err != nil {
		t.Fatalf("kustomize with helm: %v", err)
	}
	return objs
}

func sortedByName(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	sort.Slice(objs, func(i, j int) bool { return objs[i].GetKind()+objs[i].GetName() < objs[j].GetKind()+objs[j].GetName() })
	return objs
}

// TestHelmChartsAsWithHelm: a kustomization inflating a chart from the
// checkout (inline values over the chart's, an additional value file, a
// release name and namespace, CRDs, the destination's capabilities) builds
// to what Kustomize with Helm's CLI builds, and the checkout is left as it
// was.
func TestHelmChartsAsWithHelm(t *testing.T) {
	files := withPrefix("app/charts/web/", webChart)
	files["app/extra-values.yaml"] = "color: blue\n"
	files["app/kustomization.yaml"] = `namePrefix: k-
helmCharts:
- name: web
  releaseName: shop
  namespace: prod
  includeCRDs: true
  valuesInline: {replicas: 3}
  additionalValuesFiles: [extra-values.yaml]
`
	root := t.TempDir()
	writeTree(t, root, files)
	before := listTree(t, root)
	copyDir := t.TempDir()
	writeTree(t, copyDir, files)

	const kube = "1.29.3"
	apis := []string{"example.com/v1"}
	got, err := Render(context.Background(), Input{Root: root, Path: "app", Build: BuildOptions{Helm: HelmOptions{Enabled: true}}, KubeVersion: kube, APIVersions: apis})
	if err != nil {
		t.Fatal(err)
	}
	want := kustomizeWithHelm(t, filepath.Join(copyDir, "app"), kube, apis)
	if !reflect.DeepEqual(sortedByName(got), sortedByName(want)) {
		t.Fatalf("Capstan built\n%v\nKustomize with helm built\n%v", got, want)
	}
	deploy := find(t, got, "Deployment", "k-shop-web")
	if n, _, _ := unstructured.NestedInt64(deploy.Object, "spec", "replicas"); n != 3 || deploy.GetNamespace() != "prod" ||
		deploy.GetAnnotations()["color"] != "blue" || deploy.GetAnnotations()["kube-version"] != "v"+kube || deploy.GetAnnotations()["has-example"] != "true" {
		t.Errorf("the chart did not see its values, namespace or capabilities: %v", deploy.Object)
	}
	find(t, got, "CustomResourceDefinition", "widgets.example.com") // Kustomize does not prefix CRDs
	if after := listTree(t, root); !reflect.DeepEqual(before, after) {
		t.Errorf("the build changed the checkout: %v, then %v", before, after)
	}
}

// TestHelmChartsFetched: charts not in the checkout are fetched through
// the build's fetcher, from an HTTP repository with its credentials and
// from an OCI registry, and nothing is written into the checkout.
func TestHelmChartsFetched(t *testing.T) {
	files := map[string]string{}
	for p, c := range webChart {
		if p != "Chart.yaml" { // chartserver writes it
			files[p] = c
		}
	}
	httpRepo := chartserver.NewHTTPRepo(t, chartserver.Chart{Name: "web", Version: "1.2.0", Files: files})
	oci := chartserver.NewOCIRegistry(t, chartserver.Chart{Name: "web", Version: "2.0.0", Files: files})
	root := t.TempDir()
	writeTree(t, root, map[string]string{"app/kustomization.yaml": fmt.Sprintf(`helmCharts:
- {name: web, repo: %s, version: 1.2.0, releaseName: from-http, valuesInline: {color: green}}
- {name: web, repo: oci://%s/charts, version: 2.0.0, releaseName: from-oci}
`, httpRepo.URL, oci.Host)})
	before := listTree(t, root)
	fetch := &chartFetcher{client: chartrepo.NewClient(chartrepo.Options{Root: t.TempDir(), PlainHTTP: true}),
		creds: map[string]git.Creds{httpRepo.URL: {Username: httpRepo.Username, Password: httpRepo.Password}}}
	got, err := Render(context.Background(), Input{Root: root, Path: "app", Build: BuildOptions{Helm: HelmOptions{Enabled: true}}, Charts: fetch})
	if err != nil {
		t.Fatal(err)
	}
	if c := find(t, got, "Deployment", "from-http-web").GetAnnotations()["color"]; c != "green" {
		t.Errorf("inline values over the fetched chart's: color %q, want green", c)
	}
	find(t, got, "Deployment", "from-oci-web")
	if after := listTree(t, root); !reflect.DeepEqual(before, after) {
		t.Errorf("the build wrote into the checkout: %v, then %v", before, after)
	}
	if _, err := Render(context.Background(), Input{Root: root, Path: "app", Build: BuildOptions{Helm: HelmOptions{Enabled: true}}}); err == nil || !strings.Contains(err.Error(), "fetching charts is not available") {
		t.Errorf("without a fetcher: %v", err)
	}
}

// TestHelmChartsRefusals: helmCharts that would read outside the checkout,
// or a build without --enable-helm, fail with an error; nothing renders.
func TestHelmChartsRefusals(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, withPrefix("web/", webChart))
	writeTree(t, outside, map[string]string{"secret.yaml": "color: stolen\n"})
	for _, tt := range []struct {
		name, kustomization, want string
		disabled                  bool
	}{
		{"helm disabled", "helmCharts: [{name: web}]\n", "must specify --enable-helm", true},
		{"chart home outside", fmt.Sprintf("helmGlobals: {chartHome: %s}\nhelmCharts: [{name: web, releaseName: r}]\n", outside), "outside", false},
		{"chart home outside, values replaced", fmt.Sprintf("helmGlobals: {chartHome: %s}\nhelmCharts: [{name: web, releaseName: r, valuesMerge: replace, valuesInline: {a: b}}]\n", outside), "outside the repository", false},
		{"values file outside", fmt.Sprintf("helmCharts: [{name: web, releaseName: r, valuesFile: %s}]\n", filepath.Join(outside, "secret.yaml")), "outside", false},
		{"additional values outside", "helmCharts: [{name: web, releaseName: r, additionalValuesFiles: [../../secret.yaml]}]\n", "outside", false},
		{"no chart, no repo", "helmCharts: [{name: missing, releaseName: r}]\n", "no repo specified for pull", false},
		{"name as a flag", "helmCharts: [{name: --post-renderer=/bin/sh, releaseName: r}]\n", "must not start with '-'", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			files := withPrefix("app/charts/web/", webChart)
			files["app/kustomization.yaml"] = tt.kustomization
			writeTree(t, root, files)
			objs, err := Render(context.Background(), Input{Root: root, Path: "app", Build: BuildOptions{Helm: HelmOptions{Enabled: !tt.disabled}}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %d objects, %v; want an error with %q", len(objs), err, tt.want)
			}
			if strings.Contains(err.Error(), "stolen") {
				t.Errorf("the error shows a file from outside: %v", err)
			}
		})
	}
}

// chartFetcher fetches charts with each repository's credentials, as the
// repo server's does.
type chartFetcher struct {
	client *chartrepo.Client
	creds  map[string]git.Creds
}

func (f *chartFetcher) FetchDependency(ctx context.Context, repoURL, name, version string) (string, error) {
	resolved, err := f.client.Resolve(ctx, repoURL, name, version, f.creds[repoURL], false)
	if err != nil {
		return "", err
	}
	return f.client.Fetch(ctx, repoURL, name, resolved, f.creds[repoURL])
}

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, strings.TrimPrefix(path, root))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s/%s in %d objects", kind, name, len(objs))
	return nil
}
