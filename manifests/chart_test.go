package manifests_test

import (
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const chartDir = "../charts/capstan"

// renderChart renders the chart with values into namespace, as `helm
// template` does, and returns its objects.
func renderChart(t *testing.T, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "capstan", Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(files[name]), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	}
	return out
}

// valuesFile reads one of the chart's values files.
func valuesFile(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(chartDir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestChartLints(t *testing.T) {
	for _, file := range []string{"values.yaml", "values-ha.yaml"} {
		linter := lint.All(chartDir, valuesFile(t, file), "argocd", false)
		for _, msg := range linter.Messages {
			if msg.Severity >= support.WarningSev {
				t.Errorf("%s: %s", file, msg)
			}
		}
	}
}

// TestChartRendersTheInstallFiles: `helm template` with the default values
// is install.yaml, and with values-ha.yaml it is ha/install.yaml, object
// for object (the chart only adds Helm's keep policy to the CRDs).
func TestChartRendersTheInstallFiles(t *testing.T) {
	for values, file := range map[string]string{"": "install.yaml", "values-ha.yaml": "ha/install.yaml"} {
		t.Run(file, func(t *testing.T) {
			var vals map[string]any
			if values != "" {
				vals = valuesFile(t, values)
			}
			got := byKey(t, renderChart(t, "argocd", vals))
			want := byKey(t, readObjects(t, file))
			for key, w := range want {
				g, ok := got[key]
				if !ok {
					t.Errorf("%s: not rendered by the chart", key)
					continue
				}
				if w.GetNamespace() == "" && g.GetNamespace() == "argocd" {
					w.SetNamespace("argocd") // install files are applied with -n
				}
				normalize(g)
				normalize(w)
				if !reflect.DeepEqual(g.Object, w.Object) {
					gy, _ := yaml.Marshal(g.Object)
					wy, _ := yaml.Marshal(w.Object)
					t.Errorf("%s differs:\n--- chart\n%s\n--- %s\n%s", key, gy, file, wy)
				}
			}
			for key := range got {
				if _, ok := want[key]; !ok {
					t.Errorf("%s: rendered by the chart, not in %s", key, file)
				}
			}
		})
	}
}

// TestChartValues renders the chart with the common values set and
// applies the result to the local cluster with strict field validation.
func TestChartValues(t *testing.T) {
	localcluster.Need(t)
	ns := cluster.NewNamespace(t)
	objs := renderChart(t, ns, map[string]any{
		"global":         map[string]any{"image": map[string]any{"tag": "v1.2.3"}},
		"crds":           map[string]any{"install": false},
		"redis":          map[string]any{"enabled": false},
		"dex":            map[string]any{"enabled": false},
		"controller":     map[string]any{"replicas": 3},
		"applicationSet": map[string]any{"enabled": false},
		"imageUpdater": map[string]any{
			"extraArgs": []any{"--max-concurrency=3"},
			"config":    map[string]any{"watch.namespaces": "team-a,team-b", "interval": "5m"},
			"secret":    map[string]any{"items": map[string]any{"webhook.ghcr-secret": "gh"}},
		},
		"notifications": map[string]any{
			"argocdUrl":     "https://cd.example.com",
			"notifiers":     map[string]any{"service.webhook.ci": "url: https://ci.example.com\n"},
			"templates":     map[string]any{"template.synced": "message: synced\n"},
			"triggers":      map[string]any{"trigger.on-synced": "- when: 'true'\n  send: [synced]\n"},
			"subscriptions": []any{map[string]any{"recipients": []any{"ci"}, "triggers": []any{"on-synced"}}},
			"secret":        map[string]any{"items": map[string]any{"token": "t0ken"}},
			"extraArgs":     []any{"--processors-count=2"},
		},
		"server": map[string]any{
			"replicas":  2,
			"extraArgs": []any{"--metrics-port=9083"},
			"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}},
			"env":       []any{map[string]any{"name": "EXTRA", "value": "x"}},
			"ingress":   map[string]any{"enabled": true, "ingressClassName": "nginx", "tls": true},
		},
		"configs": map[string]any{
			"cm":     map[string]any{"url": "https://cd.example.com", "exec.enabled": true, "dex.config": "connectors: []\n"},
			"params": map[string]any{"server.insecure": true, "redis.server": "redis.example.com:6379"},
			"rbac":   map[string]any{"policy.default": "role:readonly"},
			"secret": map[string]any{"argocdServerAdminPassword": "$2a$10$hash", "extra": map[string]any{"webhook.github.secret": "s3cret"}},
		},
	})
	index := byKey(t, objs)
	get := func(key string, fields ...string) any {
		o, ok := index[key]
		if !ok {
			t.Fatalf("%s not rendered", key)
		}
		v, _, _ := unstructured.NestedFieldNoCopy(o.Object, fields...)
		return v
	}
	container := func(key string) map[string]any {
		cs := get(key, "spec", "template", "spec", "containers").([]any)
		return cs[0].(map[string]any)
	}
	server := container("Deployment/argocd-server")
	checks := []struct {
		what      string
		got, want any
	}{
		{"server replicas", get("Deployment/argocd-server", "spec", "replicas"), int64(2)},
		{"controller replicas", get("StatefulSet/argocd-application-controller", "spec", "replicas"), int64(3)},
		{"controller's ARGOCD_CONTROLLER_REPLICAS", envValue(container("StatefulSet/argocd-application-controller"), "ARGOCD_CONTROLLER_REPLICAS"), "3"},
		{"image", server["image"], "ghcr.io/capstan-cd/capstan:v1.2.3"},
		{"server args", fmt.Sprint(server["args"]), "[--namespace=$(POD_NAMESPACE) --metrics-port=9083]"},
		{"server memory limit", fmt.Sprint(server["resources"]), "map[limits:map[memory:1Gi]]"},
		{"server extra env", envValue(server, "EXTRA"), "x"},
		{"argocd-cm url", get("ConfigMap/argocd-cm", "data", "url"), "https://cd.example.com"},
		{"argocd-cm exec.enabled", get("ConfigMap/argocd-cm", "data", "exec.enabled"), "true"},
		{"argocd-cm multi-line value", get("ConfigMap/argocd-cm", "data", "dex.config"), "connectors: []\n"},
		{"server.insecure", get("ConfigMap/argocd-cmd-params-cm", "data", "server.insecure"), "true"},
		{"redis.server", get("ConfigMap/argocd-cmd-params-cm", "data", "redis.server"), "redis.example.com:6379"},
		{"policy.default", get("ConfigMap/argocd-rbac-cm", "data", "policy.default"), "role:readonly"},
		{"admin.password", get("Secret/argocd-secret", "data", "admin.password"), base64.StdEncoding.EncodeToString([]byte("$2a$10$hash"))},
		{"webhook secret", get("Secret/argocd-secret", "data", "webhook.github.secret"), base64.StdEncoding.EncodeToString([]byte("s3cret"))},
		{"ingress backend port", get("Ingress/argocd-server", "spec", "rules").([]any)[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)["backend"].(map[string]any)["service"].(map[string]any)["port"].(map[string]any)["name"], "http"},
		{"namespace", index["Deployment/argocd-server"].GetNamespace(), ns},
		{"notifications service", get("ConfigMap/argocd-notifications-cm", "data", "service.webhook.ci"), "url: https://ci.example.com\n"},
		{"notifications template", get("ConfigMap/argocd-notifications-cm", "data", "template.synced"), "message: synced\n"},
		{"notifications trigger", get("ConfigMap/argocd-notifications-cm", "data", "trigger.on-synced"), "- when: 'true'\n  send: [synced]\n"},
		{"notifications subscriptions", get("ConfigMap/argocd-notifications-cm", "data", "subscriptions"), "- recipients:\n  - ci\n  triggers:\n  - on-synced\n"},
		{"notifications context", get("ConfigMap/argocd-notifications-cm", "data", "context"), "argocdUrl: https://cd.example.com\n"},
		{"notifications secret", get("Secret/argocd-notifications-secret", "data", "token"), base64.StdEncoding.EncodeToString([]byte("t0ken"))},
		{"notifications args", fmt.Sprint(container("Deployment/argocd-notifications-controller")["args"]), "[--namespace=$(POD_NAMESPACE) --processors-count=2]"},
		{"image updater args", fmt.Sprint(container("Deployment/argocd-image-updater-controller")["args"]), "[run --argocd-namespace=$(POD_NAMESPACE) --max-concurrency=3]"},
		{"image updater watch.namespaces", get("ConfigMap/argocd-image-updater-config", "data", "watch.namespaces"), "team-a,team-b"},
		{"image updater interval", get("ConfigMap/argocd-image-updater-config", "data", "interval"), "5m"},
		{"image updater webhook secret", get("Secret/argocd-image-updater-secret", "data", "webhook.ghcr-secret"), base64.StdEncoding.EncodeToString([]byte("gh"))},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
	for key := range index {
		if strings.HasPrefix(key, "CustomResourceDefinition/") || strings.Contains(key, "argocd-redis") || strings.Contains(key, "argocd-dex-server") ||
			strings.Contains(key, "argocd-applicationset-controller") {
			t.Errorf("%s rendered with crds.install, redis.enabled, dex.enabled and applicationSet.enabled off", key)
		}
	}
	apply(t, cluster, objs, ns)
}

func envValue(container map[string]any, name string) any {
	env, _ := container["env"].([]any)
	for _, e := range env {
		if e := e.(map[string]any); e["name"] == name {
			return e["value"]
		}
	}
	return nil
}

// byKey indexes objects by Kind/name.
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		key := o.GetKind() + "/" + o.GetName()
		if _, dup := out[key]; dup {
			t.Errorf("%s twice", key)
		}
		out[key] = o
	}
	return out
}

// normalize drops what may differ without changing the object: Helm's
// keep policy on CRDs, and the order of environment variables (none of
// Capstan's refers to another).
func normalize(o *unstructured.Unstructured) {
	ann := o.GetAnnotations()
	delete(ann, "helm.sh/resource-policy")
	if len(ann) == 0 {
		ann = nil
	}
	o.SetAnnotations(ann)
	for _, field := range []string{"containers", "initContainers"} {
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", field)
		for _, c := range cs {
			env, _ := c.(map[string]any)["env"].([]any)
			sort.SliceStable(env, func(i, j int) bool {
				return env[i].(map[string]any)["name"].(string) < env[j].(map[string]any)["name"].(string)
			})
		}
		if cs != nil {
			_ = unstructured.SetNestedSlice(o.Object, cs, "spec", "template", "spec", field)
		}
	}
}
