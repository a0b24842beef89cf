package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestArgoCDCLI drives Capstan with Argo CD's own CLI, over gRPC and
// again over gRPC-Web: it logs in with the initial password, reads the
// server's version and the user's info, and lists Applications.
func TestArgoCDCLI(t *testing.T) {
	localcluster.Need(t)
	for _, flags := range [][]string{nil, {"--grpc-web"}} {
		t.Run(strings.Join(append([]string{"gRPC"}, flags...), " "), func(t *testing.T) {
			f := startCapstan(t, false)
			f.login()
			remote := gitserver.NewLocalRepo(t)
			remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
			f.expect(0, "app", "create", "web", "--repo", remote.URL, "--path", "app",
				"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "default")

			argocd := argocdcli.New(t)
			argocd.Flags = flags
			if code, out, errOut := argocd.Run("login", f.addr, "--username", "admin", "--password", f.password, "--insecure"); code != 0 || !strings.Contains(out, "logged in successfully") {
				t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
			}
			var version map[string]map[string]any
			if err := json.Unmarshal([]byte(argocd.Expect(0, "version", "-o", "json")), &version); err != nil || version["server"]["Version"] == nil {
				t.Errorf("version: %v %v", err, version)
			}
			var user map[string]any
			if err := json.Unmarshal([]byte(argocd.Expect(0, "account", "get-user-info", "-o", "json")), &user); err != nil || user["loggedIn"] != true || user["username"] != "admin" {
				t.Errorf("get-user-info: %v %v", err, user)
			}
			var apps []struct {
				Metadata struct{ Name string }
				Spec     struct{ Source struct{ RepoURL string } }
			}
			if err := json.Unmarshal([]byte(argocd.Expect(0, "app", "list", "-o", "json")), &apps); err != nil || len(apps) != 1 ||
				apps[0].Metadata.Name != "web" || apps[0].Spec.Source.RepoURL != remote.URL {
				t.Errorf("app list: %v %+v", err, apps)
			}
		})
	}
}

// TestArgoCDCLIScript runs the commands of a CI pipeline with Argo CD's CLI
// against Capstan and its controller: create, diff, sync, wait, history,
// rollback, manifests, resources and a cascading delete.
func TestArgoCDCLIScript(t *testing.T) {
	localcluster.Need(t)
	for _, flags := range [][]string{nil, {"--grpc-web"}} {
		t.Run(strings.Join(append([]string{"gRPC"}, flags...), " "), func(t *testing.T) {
			f := startCapstan(t, true)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "argocd-cm"}, Data: map[string]string{"accounts.ci": "apiKey"}}
			if err := testobj.Put(context.Background(), f.c, cm); err != nil {
				t.Fatal(err)
			}
			// Apps of the control namespace are tracked by name alone: each
			// run has its own, so one's leftovers are not another's.
			web := "web" + strings.ReplaceAll(strings.Join(flags, ""), "-", "")
			dest := kubeCluster.NewNamespace(t)
			remote := gitserver.NewLocalRepo(t)
			first := remote.Commit(t, "one", map[string]string{
				"app/cm.yaml":                  configMapYAML("one"),
				"kustomize/kustomization.yaml": "namePrefix: kustomized-\nresources: [cm.yaml]\n",
				"kustomize/cm.yaml":            configMapYAML("k"),
				"helm/Chart.yaml":              "apiVersion: v2\nname: settings\nversion: 1.0.0\n",
				"helm/templates/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: helm-settings}\ndata: {v: {{ .Values.v | quote }}}\n",
				"actions/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n" +
					"  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: api, image: api:1}]}\n",
				"actions/cron.yaml": "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '@daily'\n" +
					"  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: job, image: job:1}]}}}}\n",
			})
			argocd := argocdcli.New(t)
			argocd.Flags = flags
			argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
			argocd.Expect(0, "account", "update-password", "--current-password", f.password, "--new-password", "a-new-password-1")
			argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", "a-new-password-1", "--insecure")
			// A shallow clone (Argo CD 3.3's --depth) serves every render below.
			if out := argocd.Expect(0, "repo", "add", remote.URL, "--depth", "1"); !strings.Contains(out, "added") {
				t.Errorf("repo add:\n%s", out)
			}
			var repoSecrets corev1.SecretList
			if err := f.c.List(context.Background(), &repoSecrets, client.InNamespace(f.ns), client.MatchingLabels{v1alpha1.LabelSecretType: v1alpha1.SecretTypeRepository}); err != nil ||
				len(repoSecrets.Items) != 1 || string(repoSecrets.Items[0].Data["depth"]) != "1" {
				t.Errorf("the repository Secret of repo add --depth 1: %v %v", err, repoSecrets.Items)
			}
			if out := argocd.Expect(0, "repo", "list"); !strings.Contains(out, remote.URL) {
				t.Errorf("repo list:\n%s", out)
			}
			argocd.Expect(0, "proj", "create", "team", "--dest", "https://kubernetes.default.svc,"+dest, "--src", "*")
			if out := argocd.Expect(0, "proj", "get", "team"); !strings.Contains(out, dest) {
				t.Errorf("proj get:\n%s", out)
			}
			argocd.Expect(0, "app", "create", web+"-kustomize", "--project", "team", "--repo", remote.URL, "--path", "kustomize", "--revision", "main",
				"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
			argocd.Expect(0, "app", "create", web+"-helm", "--project", "team", "--repo", remote.URL, "--path", "helm", "--revision", "main",
				"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest, "--helm-set", "v=from-helm")
			if out := argocd.Expect(0, "app", "manifests", web+"-kustomize"); !strings.Contains(out, "name: kustomized-settings") {
				t.Errorf("manifests of the Kustomize app:\n%s", out)
			}
			if out := argocd.Expect(0, "app", "manifests", web+"-helm"); !strings.Contains(out, "from-helm") {
				t.Errorf("manifests of the Helm app:\n%s", out)
			}
			argocd.Expect(0, "app", "sync", web+"-kustomize", web+"-helm", "--timeout", "60")
			argocd.Expect(0, "app", "create", web, "--repo", remote.URL, "--path", "app", "--revision", "main",
				"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
			var app struct {
				Metadata struct{ Name string }
				Spec     struct{ Destination struct{ Namespace string } }
			}
			if err := json.Unmarshal([]byte(argocd.Expect(0, "app", "get", web, "-o", "json")), &app); err != nil || app.Spec.Destination.Namespace != dest {
				t.Errorf("app get -o json: %v %+v", err, app)
			}
			if out := argocd.Expect(1, "app", "diff", web); !strings.Contains(out, "v: one") {
				t.Errorf("app diff before the first sync:\n%s", out)
			}
			argocd.Expect(0, "app", "sync", web, "--timeout", "60")
			argocd.Expect(0, "app", "wait", web, "--health", "--sync", "--timeout", "60")
			argocd.Expect(0, "app", "diff", web)
			remote.Commit(t, "two", map[string]string{"app/cm.yaml": configMapYAML("two")})
			argocd.Expect(0, "app", "sync", web, "--timeout", "60")
			if out := argocd.Expect(0, "app", "history", web); !strings.Contains(out, first[:7]) {
				t.Errorf("app history:\n%s", out)
			}
			argocd.Expect(0, "app", "rollback", web, "0", "--timeout", "60")
			if out := argocd.Expect(0, "app", "manifests", web); !strings.Contains(out, "name: settings") {
				t.Errorf("app manifests:\n%s", out)
			}
			if out := argocd.Expect(0, "app", "resources", web); !strings.Contains(out, "settings") {
				t.Errorf("app resources:\n%s", out)
			}
			// The cluster's version and connection, as Argo CD's CLI lists them.
			eventually.String(t, "cluster list with the cluster's version", func() string {
				out := argocd.Expect(0, "cluster", "list")
				if !regexp.MustCompile(`https://kubernetes.default.svc\s+in-cluster\s+1\.\d+\s+Successful`).MatchString(out) {
					return out
				}
				return ""
			})
			// Resource actions: restart a Deployment, suspend a CronJob.
			argocd.Expect(0, "app", "create", web+"-actions", "--repo", remote.URL, "--path", "actions", "--revision", "main",
				"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)
			argocd.Expect(0, "app", "sync", web+"-actions", "--async")
			argocd.Expect(0, "app", "wait", web+"-actions", "--sync", "--timeout", "60")
			// Pod logs: the Deployment's pod logs what the fake node's containers log.
			waitRunning(t, f, dest, "app=api")
			if out := argocd.Expect(0, "app", "logs", web+"-actions", "--kind", "Deployment", "--group", "apps", "--name", "api"); !strings.Contains(out, localcluster.PodLogLines[1]) {
				t.Errorf("app logs:\n%s", out)
			}
			if out := argocd.Expect(0, "app", "logs", web+"-actions", "--filter", "line 2"); strings.Contains(out, localcluster.PodLogLines[0]) || !strings.Contains(out, localcluster.PodLogLines[1]) {
				t.Errorf("app logs --filter:\n%s", out)
			}
			if out := argocd.Expect(0, "app", "actions", "list", web+"-actions", "--kind", "Deployment"); !strings.Contains(out, "restart") {
				t.Errorf("app actions list:\n%s", out)
			}
			argocd.Expect(0, "app", "actions", "run", web+"-actions", "restart", "--kind", "Deployment")
			deploy := &appsv1.Deployment{}
			if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "api"}, deploy); err != nil ||
				deploy.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
				t.Errorf("the restarted Deployment: %v %v", err, deploy.Spec.Template.Annotations)
			}
			argocd.Expect(0, "app", "actions", "run", web+"-actions", "suspend", "--kind", "CronJob")
			cron := &batchv1.CronJob{}
			if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "nightly"}, cron); err != nil ||
				cron.Spec.Suspend == nil || !*cron.Spec.Suspend {
				t.Errorf("the suspended CronJob: %v %v", err, cron.Spec.Suspend)
			}
			// A live resource patched and deleted.
			argocd.Expect(0, "app", "patch-resource", web+"-actions", "--kind", "CronJob", "--resource-name", "nightly",
				"--patch", `{"spec":{"schedule":"@hourly"}}`, "--patch-type", "application/merge-patch+json")
			if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "nightly"}, cron); err != nil || cron.Spec.Schedule != "@hourly" {
				t.Errorf("the patched CronJob: %v %q", err, cron.Spec.Schedule)
			}
			argocd.Expect(0, "app", "delete-resource", web+"-actions", "--kind", "CronJob", "--resource-name", "nightly", "--orphan")
			if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: dest, Name: "nightly"}, cron); !apierrors.IsNotFound(err) && cron.DeletionTimestamp == nil {
				t.Errorf("the deleted CronJob: %v", err)
			}
			argocd.Expect(0, "app", "delete", web, "--cascade", "--yes")
			if out := argocd.Expect(0, "account", "generate-token", "--account", "ci"); len(strings.TrimSpace(out)) < 20 {
				t.Errorf("generate-token: %q", out)
			}
			argocd.Expect(0, "logout", f.addr)
		})
	}
}

// TestRunAsArgoCD: run as argocd, Capstan's CLI keeps Argo CD's config
// file, which Argo CD's own CLI then uses as it is.
func TestRunAsArgoCD(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	dir := t.TempDir()
	t.Setenv("ARGOCD_CONFIG_DIR", dir)
	var out, errOut strings.Builder
	if code := ExecuteAs(ArgoCDName, []string{"login", f.addr, "--username", "admin", "--password", f.password, "--insecure"}, &out, &errOut); code != 0 {
		t.Fatalf("argocd login: exit %d: %s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := ExecuteAs(ArgoCDName, []string{"--help"}, &out, &errOut); code != 0 || !strings.HasPrefix(strings.SplitN(out.String(), "Usage:\n  ", 2)[1], "argocd") {
		t.Errorf("argocd --help names itself: %s", out.String())
	}
	argocd := argocdcli.New(t)
	argocd.Flags = []string{"--config", filepath.Join(dir, "config")}
	if out := argocd.Expect(0, "account", "get-user-info"); !strings.Contains(out, "admin") {
		t.Errorf("Argo CD's CLI with the config Capstan wrote:\n%s", out)
	}
}

// waitRunning waits until a pod of namespace with the label selector runs.
func waitRunning(t *testing.T, f *capstanFixture, namespace, selector string) {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	eventually.String(t, "a running pod "+selector+" in "+namespace, func() string {
		var pods corev1.PodList
		if err := f.c.List(context.Background(), &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return err.Error()
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				return ""
			}
		}
		return fmt.Sprintf("%d pods, none running", len(pods.Items))
	})
}

// TestArgoCDLogoutRevokesToken is finding N9 of the second tenant review,
// as Argo CD's own e2e logout tests check it: after a logout, the
// session's token is refused with Argo CD's message by every service,
// over gRPC, gRPC-Web and REST, while another session of the same user
// goes on. The logout is made as Argo CD 3.5's `argocd logout` makes it
// (POST /auth/logout with the token as the session cookie); the CLI built
// for these tests is older and only forgets the token locally.
func TestArgoCDLogoutRevokesToken(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	one, two := argocdcli.New(t), argocdcli.New(t)
	for _, cli := range []*argocdcli.CLI{one, two} {
		cli.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	}
	token := one.Token()
	as := func(cli *argocdcli.CLI, tok string, args ...string) (int, string) {
		code, out, errOut := cli.Run(append(args, "--server", f.addr, "--auth-token", tok, "--insecure")...)
		return code, out + errOut
	}
	if code, out := as(one, token, "account", "list"); code != 0 {
		t.Fatalf("before logout: exit %d\n%s", code, out)
	}
	if err := apiclient.New(apiclient.Server{Server: f.addr, Insecure: true}, token).Logout(context.Background()); err != nil {
		t.Fatalf("POST /auth/logout: %v", err)
	}
	for _, args := range [][]string{{"account", "list"}, {"proj", "list"}, {"app", "list", "--grpc-web"}, {"repo", "list"}} {
		if code, out := as(one, token, args...); code == 0 || !strings.Contains(out, "token is revoked") {
			t.Errorf("argocd %s with the logged-out token: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	if code, out := as(two, two.Token(), "app", "list"); code != 0 {
		t.Errorf("the other session after the logout: exit %d\n%s", code, out)
	}

	// Capstan's own CLI ends the session on the server the same way.
	f.login()
	cfg, err := apiclient.Load(f.config)
	if err != nil {
		t.Fatal(err)
	}
	_, own, err := cfg.Context("")
	if err != nil || own == "" {
		t.Fatalf("capstan's session: %q %v", own, err)
	}
	f.expect(0, "logout")
	if code, out := as(two, own, "account", "list"); code == 0 || !strings.Contains(out, "token is revoked") {
		t.Errorf("argocd account list with the token capstan logged out: exit %d\n%s", code, out)
	}
}
