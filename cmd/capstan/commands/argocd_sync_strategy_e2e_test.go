package commands

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestArgoCDSyncStrategyAndForce drives app sync --strategy and --force
// with Argo CD's CLI: the apply strategy runs no hooks, the hook strategy
// does, a change to an immutable field fails until the sync is forced,
// and Capstan's CLI sends the same.
func TestArgoCDSyncStrategyAndForce(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	ctx := context.Background()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	files := func(v string) map[string]string {
		return map[string]string{
			"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {v: " + v + "}\n",
			"app/hook.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: presync\n  annotations: {argocd.argoproj.io/hook: PreSync}\n" +
				"spec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: job, image: job:1}]}\n",
		}
	}
	remote.Commit(t, "one", files("one"))
	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	argocd.Expect(0, "app", "create", "frozen", "--repo", remote.URL, "--path", "app", "--revision", "main",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest)

	argocd.Expect(0, "app", "sync", "frozen", "--strategy", "apply", "--timeout", "60")
	hook := &batchv1.Job{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "presync"}, hook); !apierrors.IsNotFound(err) {
		t.Errorf("the apply strategy ran the PreSync hook: %v", err)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "frozen"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the apply strategy did not apply: %v", err)
	}

	remote.Commit(t, "two", files("two"))
	if code, out, errOut := argocd.Run("app", "sync", "frozen", "--strategy", "hook", "--timeout", "60"); code == 0 || !strings.Contains(out+errOut, "immutable") {
		t.Errorf("an unforced change of an immutable field: exit %d\n%s%s", code, out, errOut)
	}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "presync"}, hook); err != nil {
		t.Errorf("the hook strategy did not run the PreSync hook: %v\n%s", err, argocd.Expect(0, "app", "get", "frozen", "-o", "json"))
	}
	argocd.Expect(0, "app", "sync", "frozen", "--force", "--timeout", "60")
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "frozen"}, cm); err != nil || cm.Data["v"] != "two" {
		t.Errorf("after a forced sync: %v %v", err, cm.Data)
	}

	remote.Commit(t, "three", files("three"))
	f.login()
	f.expect(0, "app", "sync", "frozen", "--force", "--strategy", "apply", "--timeout", "60")
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "frozen"}, cm); err != nil || cm.Data["v"] != "three" {
		t.Errorf("after a forced sync by Capstan's CLI: %v %v", err, cm.Data)
	}
	if _, _, stderr := f.run("app", "sync", "frozen", "--strategy", "sideways"); !strings.Contains(stderr, `unknown sync strategy "sideways"`) {
		t.Errorf("an unknown strategy: %q", stderr)
	}
}
