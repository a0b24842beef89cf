package commands

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestAppResourceCommands drives an Application's live objects with
// Capstan's CLI, with Argo CD's command names and flags: logs, actions,
// get-resource, patch-resource, delete-resource, patch and confirm-deletion.
func TestAppResourceCommands(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.login()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "one", map[string]string{
		"actions/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n" +
			"  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: api, image: api:1}]}\n",
		"actions/cron.yaml": "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '@daily'\n" +
			"  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: job, image: job:1}]}}}}\n",
	})
	expect := f.expect
	expect(0, "app", "create", "ops", "--repo", remote.URL, "--path", "actions", "--revision", "main",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
	expect(0, "app", "sync", "ops", "--timeout", "60")
	waitRunning(t, f, dest, "app=api")
	if out := expect(0, "app", "logs", "ops", "--kind", "Deployment", "--group", "apps", "--name", "api"); !strings.Contains(out, localcluster.PodLogLines[1]) {
		t.Errorf("app logs:\n%s", out)
	}
	if out := expect(0, "app", "logs", "ops", "--filter", "line 2"); strings.Contains(out, localcluster.PodLogLines[0]) || !strings.Contains(out, localcluster.PodLogLines[1]) {
		t.Errorf("app logs --filter:\n%s", out)
	}
	if out := expect(0, "app", "actions", "list", "ops", "--kind", "Deployment"); !strings.Contains(out, "restart") {
		t.Errorf("app actions list:\n%s", out)
	}
	expect(1, "app", "actions", "run", "ops", "restart") // two objects match: --kind or --all is needed
	expect(0, "app", "actions", "run", "ops", "restart", "--kind", "Deployment")
	deploy := &appsv1.Deployment{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "api"}, deploy); err != nil ||
		deploy.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("the restarted Deployment: %v %v", err, deploy.Spec.Template.Annotations)
	}
	// A custom Lua action from argocd-cm, beside the built-in ones.
	customAction := "mergeBuiltinActions: true\ndiscovery.lua: |\n  local actions = {}\n  actions[\"pause\"] = {[\"disabled\"] = obj.spec.paused == true}\n  return actions\n" +
		"definitions:\n- name: pause\n  action.lua: |\n    obj.spec.paused = true\n    obj.metadata.annotations = obj.metadata.annotations or {}\n    obj.metadata.annotations[\"paused-at\"] = os.date(\"!%Y\")\n    return obj\n"
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "argocd-cm"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["resource.customizations.actions.apps_Deployment"] = customAction
	if err := f.c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	if out := expect(0, "app", "actions", "list", "ops", "--kind", "Deployment"); !strings.Contains(out, "pause") || !strings.Contains(out, "restart") {
		t.Errorf("app actions list with a custom action:\n%s", out)
	}
	expect(0, "app", "actions", "run", "ops", "pause", "--kind", "Deployment")
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "api"}, deploy); err != nil ||
		!deploy.Spec.Paused || len(deploy.Annotations["paused-at"]) != 4 {
		t.Errorf("the Deployment the custom action paused: %v %v %v", err, deploy.Spec.Paused, deploy.Annotations)
	}
	// Listed as disabled once paused, it still runs when asked, as in Argo
	// CD's API: the action itself decides what it does.
	if out := expect(0, "app", "actions", "list", "ops", "--kind", "Deployment"); !regexp.MustCompile(`pause\s+true`).MatchString(out) {
		t.Errorf("pause is not listed as disabled once paused:\n%s", out)
	}
	expect(0, "app", "actions", "run", "ops", "pause", "--kind", "Deployment")
	expect(0, "app", "patch-resource", "ops", "--kind", "CronJob", "--resource-name", "nightly",
		"--patch", `{"spec":{"schedule":"@hourly"}}`, "--patch-type", "application/merge-patch+json")
	if out := expect(0, "app", "get-resource", "ops", "--kind", "CronJob", "--filter-fields", "spec.schedule"); !strings.Contains(out, "schedule: '@hourly'") || strings.Contains(out, "jobTemplate") {
		t.Errorf("get-resource --filter-fields:\n%s", out)
	}
	if out := expect(0, "app", "get-resource", "ops", "-N", f.ns, "--group", "batch", "--kind", "CronJob", "--filter-fields", "spec.schedule"); !strings.Contains(out, "schedule: '@hourly'") {
		t.Errorf("get-resource -N --group:\n%s", out)
	}
	expect(0, "app", "delete-resource", "ops", "--kind", "CronJob", "--resource-name", "nightly", "--orphan")
	cron := &batchv1.CronJob{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "nightly"}, cron); !apierrors.IsNotFound(err) && cron.DeletionTimestamp == nil {
		t.Errorf("the deleted CronJob: %v", err)
	}
	expect(0, "app", "patch", "ops", "--type", "merge", "--patch", `{"metadata":{"labels":{"team":"ops"}}}`)
	expect(0, "app", "confirm-deletion", "ops")
	app := &v1alpha1.Application{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "ops"}, app); err != nil ||
		app.Labels["team"] != "ops" || app.Annotations["argocd.argoproj.io/deletion-approved"] == "" {
		t.Errorf("the patched Application: %v %v %v", err, app.Labels, app.Annotations)
	}

	// Sync by selector with Argo CD's retry, info and option flags.
	expect(0, "app", "patch", "ops", "--type", "merge", "--patch", `{"metadata":{"labels":{"team":"ops"}}}`)
	expect(0, "app", "sync", "-l", "team=ops", "--retry-limit", "2", "--info", "reason=release", "--apply-out-of-sync-only", "--server-side", "--timeout", "60")
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "ops"}, app); err != nil || app.Status.OperationState == nil ||
		app.Status.OperationState.Operation.Retry.Limit != 2 || len(app.Status.OperationState.Operation.Info) != 1 ||
		!slices.Contains(app.Status.OperationState.Operation.Sync.SyncOptions, "ApplyOutOfSyncOnly=true") {
		t.Errorf("the operation of a sync by selector: %v %+v", err, app.Status.OperationState)
	}
	// The server computes the differences: Argo CD's bound for the CLI's
	// own is accepted, and said to change nothing.
	if code, _, errOut := f.run("app", "sync", "ops", "--ignore-normalizer-jq-execution-timeout", "1s", "--timeout", "60"); code != 0 ||
		!strings.Contains(errOut, "--ignore-normalizer-jq-execution-timeout has no effect: the server computes the differences") {
		t.Errorf("app sync --ignore-normalizer-jq-execution-timeout: exit %d, %s", code, errOut)
	}
	// A live change to the Deployment: the app differs from Git.
	expect(0, "app", "patch-resource", "ops", "--kind", "Deployment", "--resource-name", "api",
		"--patch", `{"spec":{"template":{"spec":{"containers":[{"name":"api","image":"api:2"}]}}}}`, "--patch-type", "application/merge-patch+json")
	f.expect(1, "app", "diff", "ops", "--hard-refresh")
	f.expect(5, "app", "diff", "ops", "--refresh", "--diff-exit-code", "5")
	f.expect(0, "app", "diff", "ops", "--exit-code=false")
	f.expect(2, "app", "diff", "ops", "--revision", "v1")
}
