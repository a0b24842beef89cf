package controller

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
	"github.com/capstan-cd/capstan/internal/testing/cmpserver"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// greeter is a plugin sidecar's plugin.yaml: it prints a ConfigMap from its
// environment and the source's files, and claims directories holding
// greeting.txt.
const greeter = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: greeter
spec:
  version: v1
  init:
    command: [sh, -c, "tr a-z A-Z < greeting.txt > loud.txt"]
  generate:
    command: [sh, -c]
    args:
      - |
        cat <<END
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: greeting
        data:
          greeting: "$(cat loud.txt)"
          app: "$ARGOCD_APP_NAME"
          project: "$ARGOCD_APP_PROJECT_NAME"
          revision: "$ARGOCD_APP_REVISION_SHORT"
          audience: "$ARGOCD_ENV_AUDIENCE"
          size: "$PARAM_SIZE"
        END
  discover:
    fileName: "./greeting.txt"
`

// TestConfigManagementPlugin: Argo CD's own plugin server
// (argocd-cmp-server) renders an Application, as a sidecar of the repo
// server does — once named in spec.source.plugin with env and parameters,
// once found by its discovery rules — and the controller syncs what it
// printed.
func TestConfigManagementPlugin(t *testing.T) {
	localcluster.Need(t)
	if err := kube.InstallCRDs(context.Background(), testCluster.Config); err != nil {
		t.Fatal(err)
	}
	sockets := cmpserver.SocketDir(t)
	cmpserver.Start(t, sockets, greeter)
	e := startWith(t, testCluster.NewNamespace(t), func(o *Options) {
		o.Renderer = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second, Plugins: plugin.Options{SocketDir: sockets}})
	})
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "greet", map[string]string{
		"named/greeting.txt":      "hello",
		"discovered/greeting.txt": "hi there",
	})
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: testCluster.NewNamespace(t)}
	size := "large"
	named := newApp(e, "named", "default", remote.URL, "named", dest)
	named.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{
		Name:       "greeter-v1",
		Env:        v1alpha1.Env{{Name: "AUDIENCE", Value: "the $ARGOCD_APP_NAME team"}},
		Parameters: v1alpha1.ApplicationSourcePluginParameters{{Name: "size", String_: &size}},
	}
	e.create(named)
	e.waitSyncedHealthy("named")
	cm, err := e.kube.CoreV1().ConfigMaps(dest.Namespace).Get(context.Background(), "greeting", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"greeting": "HELLO", "app": "named", "project": "default", "revision": sha[:7],
		"audience": "the named team", "size": "large"}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, cm.Data[k], v)
		}
	}
	if typ := e.app("named").Status.SourceType; typ != v1alpha1.SourceTypePlugin {
		t.Errorf("status.sourceType = %q, want Plugin", typ)
	}

	// No plugin block: the plugin's discovery rule (greeting.txt) claims it.
	found := newApp(e, "found", "default", remote.URL, "discovered", v1alpha1.ApplicationDestination{Server: dest.Server, Namespace: testCluster.NewNamespace(t)})
	e.create(found)
	e.waitSyncedHealthy("found")
	if cm, err := e.kube.CoreV1().ConfigMaps(found.Spec.Destination.Namespace).Get(context.Background(), "greeting", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "HI THERE" {
		t.Errorf("discovered app's ConfigMap = %v, %v", cm.Data, err)
	}

	// A plugin nobody runs: Argo CD's message, as a ComparisonError.
	missing := newApp(e, "missing", "default", remote.URL, "named", dest)
	missing.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: "nobody"}
	e.create(missing)
	e.waitCondition("missing", v1alpha1.ApplicationConditionComparisonError, `could not find cmp-server plugin with name "nobody" supporting the given repository`)
}
