package commands

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestAdminCommands runs Argo CD's admin tools against an install on the
// local cluster, through the kubeconfig: the initial password, an export
// restored with import (dry run, a deleted app and a changed setting
// restored, an extra app pruned without deleting what it deployed), RBAC
// checks, generate-spec, resource overrides on local files, a cluster's
// kubeconfig and shards, and a bulk role policy change.
func TestAdminCommands(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	kube := []string{"--kubeconfig", kubeCluster.KubeconfigPath, "-n", f.ns}
	admin := func(want int, args ...string) string {
		t.Helper()
		return f.expect(want, append(append([]string{"admin"}, args...), kube...)...)
	}

	if out := admin(0, "initial-password"); !strings.HasPrefix(out, f.password+"\n") {
		t.Errorf("initial-password:\n%s", out)
	}

	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{"accounts.ci": "apiKey"}}); err != nil {
		t.Fatal(err)
	}
	newApp := func(name string) *v1alpha1.Application {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Finalizers: []string{v1alpha1.ResourcesFinalizerName}},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git", Path: name},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "x"}},
			Status: v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		return app
	}
	newApp("web")
	backup := filepath.Join(dir, "backup.yaml")
	admin(0, "export", "-o", backup)
	data, _ := os.ReadFile(backup)
	for _, want := range []string{"name: argocd-secret", "kind: AppProject", "name: web", "accounts.ci: apiKey"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the backup lacks %q", want)
		}
	}
	if strings.Contains(string(data), "resourceVersion") || strings.Contains(string(data), "uid:") {
		t.Error("the backup keeps server-set metadata")
	}
	// --strip-status leaves the status out, for manifests to create anew.
	stripped := filepath.Join(dir, "stripped.yaml")
	admin(0, "export", "-o", stripped, "--strip-status")
	sdata, _ := os.ReadFile(stripped)
	if !strings.Contains(string(data), "\nstatus:") || strings.Contains(string(sdata), "\nstatus:") || !strings.Contains(string(sdata), "name: web") {
		t.Errorf("--strip-status: the plain backup has a status %v, the stripped one %v", strings.Contains(string(data), "\nstatus:"), strings.Contains(string(sdata), "\nstatus:"))
	}

	// Lose an app and a setting, gain an app: import puts things back.
	web := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	web.Finalizers = nil
	if err := f.c.Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: settings.CMName}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["accounts.ci"] = "login"
	if err := f.c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	newApp("extra")
	if out := admin(0, "import", backup, "--dry-run", "--prune"); !strings.Contains(out, "Application "+f.ns+"/web created (dry run)") ||
		!strings.Contains(out, "ConfigMap "+f.ns+"/argocd-cm updated (dry run)") || !strings.Contains(out, "Application "+f.ns+"/extra pruned (dry run)") {
		t.Errorf("import --dry-run:\n%s", out)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, &v1alpha1.Application{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry run created web: %v", err)
	}
	admin(0, "import", backup, "--prune")
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, web); err != nil || len(web.Finalizers) != 1 {
		t.Errorf("web after import: %v %v", err, web.Finalizers)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: settings.CMName}, cm); err != nil || cm.Data["accounts.ci"] != "apiKey" {
		t.Errorf("argocd-cm after import: %v %v", err, cm.Data)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "extra"}, &v1alpha1.Application{}); !apierrors.IsNotFound(err) {
		t.Errorf("extra was not pruned: %v", err)
	}
	if out := admin(0, "import", backup, "--verbose"); !strings.Contains(out, "unchanged") || strings.Contains(out, " updated") {
		t.Errorf("importing the same backup again changed something:\n%s", out)
	}

	policy := write("policy.csv", "p, role:deployer, applications, sync, team-a/*, allow\ng, alice, role:deployer\n")
	if out := admin(0, "settings", "rbac", "can", "alice", "sync", "applications", "team-a/web", "--policy-file", policy); out != "Yes\n" {
		t.Errorf("rbac can: %q", out)
	}
	if out := admin(1, "settings", "rbac", "can", "alice", "delete", "applications", "team-a/web", "--policy-file", policy); out != "No\n" {
		t.Errorf("rbac can delete: %q", out)
	}
	admin(0, "settings", "rbac", "can", "role:readonly", "get", "applications", "*/*", "--policy-file", policy, "-q")
	admin(1, "settings", "rbac", "can", "role:readonly", "get", "applications", "*/*", "--policy-file", policy, "--use-builtin-policy=false", "-q")
	admin(0, "settings", "rbac", "validate", "--policy-file", policy)
	admin(1, "settings", "rbac", "validate", "--policy-file", write("bad.csv", "p, role:x, applications\n"))
	if out := admin(0, "settings", "validate", "--load-cluster-settings"); !strings.Contains(out, "✅ accounts") {
		t.Errorf("settings validate:\n%s", out)
	}

	spec := f.expect(0, "admin", "app", "generate-spec", "guestbook", "--repo", "https://github.com/argoproj/argocd-example-apps.git", "--path", "guestbook",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "default", "--sync-policy", "automated")
	var generated v1alpha1.Application
	if err := cmdutil.ReadObject(write("gen.yaml", spec), &generated); err != nil || generated.Kind != "Application" || generated.Spec.Source.Path != "guestbook" ||
		generated.Spec.SyncPolicy == nil || generated.Spec.SyncPolicy.Automated == nil {
		t.Errorf("app generate-spec: %v\n%s", err, spec)
	}
	if out := f.expect(0, "admin", "repo", "generate-spec", "https://github.com/org/app.git", "--username", "git", "--password", "s3cret"); !strings.Contains(out, "argocd.argoproj.io/secret-type: repository") {
		t.Errorf("repo generate-spec:\n%s", out)
	}

	deploy := write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\nstatus: {replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 0}\n")
	if out := admin(0, "settings", "resource-overrides", "health", deploy); !strings.Contains(out, "STATUS: Healthy") {
		t.Errorf("resource-overrides health:\n%s", out)
	}
	if out := admin(0, "settings", "resource-overrides", "list-actions", deploy); !strings.Contains(out, "restart") {
		t.Errorf("list-actions:\n%s", out)
	}
	cron := write("cron.yaml", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: jobs}\nspec:\n  schedule: '0 1 * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}\n")
	if out := admin(0, "settings", "resource-overrides", "run-action", cron, "create-job"); !strings.Contains(out, "kind: Job") {
		t.Errorf("run-action create-job:\n%s", out)
	}

	server := strings.TrimSuffix(kubeCluster.Config.Host, "/")
	f.login()
	// A service account of its own: argocd-manager stays absent for the
	// tests that check cluster add creates it.
	manager := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "admin-test-manager"}}
	if err := f.c.Create(ctx, manager); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.c.Delete(context.Background(), manager) })
	f.expect(0, "cluster", "add", "capstan-local", "--kubeconfig", kubeCluster.KubeconfigPath, "--name", "self", "--yes", "--service-account", "admin-test-manager", "--label", "env=test", "--shard", "1")
	out := filepath.Join(dir, "self.kubeconfig")
	admin(0, "cluster", "kubeconfig", server, out)
	cfg, err := clientcmd.BuildConfigFromFlags("", out)
	if err != nil || cfg.Host != server || cfg.BearerToken == "" {
		t.Errorf("cluster kubeconfig: %v %+v", err, cfg)
	}
	if shards := admin(0, "cluster", "shards", "--replicas", "2"); !regexp.MustCompile(`(?m)^1\s+` + regexp.QuoteMeta(server)).MatchString(shards) {
		t.Errorf("cluster shards:\n%s", shards)
	}
	// Argo CD's Redis flags are accepted, and said to change nothing.
	if code, stats, errOut := f.run(append([]string{"admin", "cluster", "stats", "--redis", "argocd-redis:6379"}, kube...)...); code != 0 ||
		!strings.Contains(stats, server) || !strings.Contains(errOut, "--redis has no effect") {
		t.Errorf("cluster stats --redis: %d\n%s%s", code, stats, errOut)
	}

	if err := f.c.Create(ctx, &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: f.ns},
		Spec: v1alpha1.AppProjectSpec{Roles: []v1alpha1.ProjectRole{{Name: "deployer"}, {Name: "viewer"}}}}); err != nil {
		t.Fatal(err)
	}
	admin(0, "proj", "update-role-policy", "team-*", "set", "action/apps/Deployment/restart", "--role", "deploy*", "--dry-run=false")
	p := &v1alpha1.AppProject{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "team-a"}, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Roles[0].Policies) != 1 || p.Spec.Roles[0].Policies[0] != "p, proj:team-a:deployer, applications, action/apps/Deployment/restart, team-a/*, allow" || len(p.Spec.Roles[1].Policies) != 0 {
		t.Errorf("roles after update-role-policy: %+v", p.Spec.Roles)
	}
	// ApplicationSets: listed through the API; generating a preview is
	// not served yet, and the API says so rather than that the path is wrong.
	if code, _, errOut := f.run("appset", "list"); code != 0 {
		t.Errorf("appset list: %d %s", code, errOut)
	}
}

// TestReconcileResults: get-reconcile-results writes each Application's
// sync status, health and conditions in Argo CD's file format, and
// diff-reconcile-results shows what changed between two such files.
func TestReconcileResults(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	ctx := context.Background()
	kube := []string{"--kubeconfig", kubeCluster.KubeconfigPath, "-n", f.ns}
	for _, name := range []string{"web", "api"} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"team": name}},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: name},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		app.Status.Sync.Status, app.Status.Health.Status = v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy
		if err := f.c.Update(ctx, app); err != nil { // the CRD has no status subresource, as Argo CD's
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.yaml"), filepath.Join(dir, "after.json")
	f.expect(0, append([]string{"admin", "app", "get-reconcile-results", before}, kube...)...)
	data, err := os.ReadFile(before)
	if err != nil {
		t.Fatal(err)
	}
	if want := "applications:\n- conditions: null\n  health: Healthy\n  name: api\n  sync:\n"; !strings.HasPrefix(string(data), want) {
		t.Errorf("results file:\n%s", data)
	}
	web := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	web.Status.Health.Status = v1alpha1.HealthStatusDegraded
	if err := f.c.Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	f.expect(0, append([]string{"admin", "app", "get-reconcile-results", after, "--o", "json"}, kube...)...)
	out := f.expect(0, "admin", "app", "diff-reconcile-results", before, after)
	if !strings.Contains(out, "-health: Healthy\n+health: Degraded\n") || !strings.HasPrefix(out, "api\nweb\n") {
		t.Errorf("diff-reconcile-results:\n%s", out)
	}
	if out := f.expect(0, append([]string{"admin", "app", "get-reconcile-results", after, "--l", "team=api"}, kube...)...); out != "" {
		t.Errorf("output: %s", out)
	}
	if data, _ := os.ReadFile(after); strings.Contains(string(data), "name: web") {
		t.Errorf("the selector kept web:\n%s", data)
	}

	// --refresh reconciles now instead of reading the recorded status:
	// a source that cannot be fetched is a ComparisonError; a real one is
	// compared with the cluster, at the commit its branch points at.
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "cm", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: refreshed}\ndata: {a: b}\n"})
	dest := kubeCluster.NewNamespace(t)
	local := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: f.ns, Labels: map[string]string{"team": "local"}},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest}}}
	if err := f.c.Create(ctx, local); err != nil {
		t.Fatal(err)
	}
	refreshed := func(selector string) reconcileFile {
		t.Helper()
		path := filepath.Join(dir, "refreshed-"+selector+".yaml")
		f.expect(0, append([]string{"admin", "app", "get-reconcile-results", path, "--refresh", "--l", selector}, kube...)...)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var res reconcileFile
		if err := yaml.Unmarshal(data, &res); err != nil || len(res.Applications) != 1 {
			t.Fatalf("results of %s: %v\n%s", selector, err, data)
		}
		return res
	}
	res := refreshed("team=local").Applications[0]
	if res.Health != v1alpha1.HealthStatusMissing || res.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync || res.Sync.Revision != sha {
		t.Errorf("local before a sync: %+v", res)
	}
	res = refreshed("team=web").Applications[0]
	if res.Sync.Status != v1alpha1.SyncStatusCodeUnknown || len(res.Conditions) != 1 || res.Conditions[0].Type != v1alpha1.ApplicationConditionComparisonError {
		t.Errorf("web, whose repository does not exist: %+v", res)
	}
	if got := &(v1alpha1.Application{}); f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, got) != nil || got.Status.Health.Status != v1alpha1.HealthStatusDegraded {
		t.Errorf("--refresh wrote the app's status: %+v", got.Status)
	}
}

// reconcileFile is a get-reconcile-results file.
type reconcileFile struct {
	Applications []struct {
		Name       string
		Health     v1alpha1.HealthStatusCode
		Sync       v1alpha1.SyncStatus
		Conditions []v1alpha1.ApplicationCondition
	}
}
