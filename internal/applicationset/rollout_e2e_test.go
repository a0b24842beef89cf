package applicationset_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// degradedConfigMaps is a health check making a ConfigMap whose
// data.state is "broken" Degraded: a failing workload on the local
// cluster, through argocd-cm as a user would write one.
const degradedConfigMaps = `hs = {status = "Healthy", message = "fine"}
if obj.data ~= nil and obj.data.state == "broken" then
  hs.status = "Degraded"
  hs.message = "broken on purpose"
end
return hs`

// TestRollingSyncWithTheController runs a RollingSync over three steps
// with Capstan's application controller syncing the Applications into
// the local cluster: step two starts only once step one is Healthy; a
// Degraded Application of step two holds step three back; fixed in Git,
// it syncs again and step three follows.
func TestRollingSyncWithTheController(t *testing.T) {
	dest := testCluster.NewNamespace(t)
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	e := start(t, func(o *applicationset.Options) { o.ProgressiveSyncs = true; o.Git = renderer })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: e.ns},
		Data: map[string]string{"resource.customizations.health.ConfigMap": degradedConfigMaps}}); err != nil {
		t.Fatal(err)
	}
	git := gitserver.NewLocalRepo(t)
	cm := func(env, state string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-settings, namespace: %s}\ndata: {state: %s}\n", env, dest, state)
	}
	files := map[string]string{"envs/dev/cm.yaml": cm("dev", "ok"), "envs/qa/cm.yaml": cm("qa", "broken"), "envs/prod/cm.yaml": cm("prod", "ok")}
	git.Commit(t, "three environments", files)
	go func() {
		_ = controller.Run(ctx, controller.Options{Config: testCluster.Config, Namespace: e.ns, Renderer: renderer, Resync: time.Hour,
			RepoPoll: time.Second, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}()

	step := func(env string) v1alpha1.ApplicationSetRolloutStep {
		return v1alpha1.ApplicationSetRolloutStep{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{env}}}}
	}
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "envs", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			Git: &v1alpha1.GitGenerator{RepoURL: git.URL, Revision: "HEAD", Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "envs/*"}}}}}},
		Strategy: &v1alpha1.ApplicationSetStrategy{Type: "RollingSync", RollingSync: &v1alpha1.ApplicationSetRolloutStrategy{
			Steps: []v1alpha1.ApplicationSetRolloutStep{step("dev"), step("qa"), step("prod")}}},
		Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{path.basename}}", Labels: map[string]string{"env": "{{path.basename}}"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: git.URL, Path: "{{path}}", TargetRevision: "HEAD"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}},
		},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	state := func() map[string]string {
		out := map[string]string{}
		for _, st := range e.appset("envs").Status.ApplicationStatus {
			out[st.Application] = st.Status
		}
		return out
	}
	exists := func(name string) bool {
		return e.client.Get(ctx, client.ObjectKey{Namespace: dest, Name: name}, &corev1.ConfigMap{}) == nil
	}
	e.eventually("dev Healthy, qa synced but Degraded, prod held back", func() string {
		apps := e.apps()
		qa := apps["qa"]
		if got := state(); got["dev"] != "Healthy" || got["prod"] != "Waiting" || qa == nil || qa.Status.Health.Status != v1alpha1.HealthStatusDegraded {
			return fmt.Sprintf("rollout %v", got)
		}
		return ""
	})
	if !exists("dev-settings") || !exists("qa-settings") {
		t.Fatal("steps one and two are not in the cluster")
	}
	time.Sleep(3 * time.Second) // a period in which prod must stay unsynced
	if exists("prod-settings") {
		t.Fatal("step three was synced while step two is Degraded")
	}

	files["envs/qa/cm.yaml"] = cm("qa", "ok")
	git.Commit(t, "qa fixed", files)
	e.eventually("the rollout completed into the cluster", func() string {
		if got := state(); got["qa"] != "Healthy" || got["prod"] != "Healthy" || !exists("prod-settings") {
			return fmt.Sprintf("rollout %v", got)
		}
		return ""
	})
}
