package commands

import (
	"fmt"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"

	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

func configMapYAML(v string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: " + v + "}\n"
}

// TestAppCommandsEndToEnd drives an Application through the CLI against
// an API server and a controller: create, diff, sync, wait, history,
// rollback, set, and a cascading delete; over REST, and over the RPC API
// with gRPC-Web.
func TestAppCommandsEndToEnd(t *testing.T) { overBothAPIs(t, appCommandsEndToEnd) }

func appCommandsEndToEnd(t *testing.T, flags ...string) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	f.flags = flags
	f.login()
	ctx := context.Background()
	dest := kubeCluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", map[string]string{"app/cm.yaml": configMapYAML("one")})
	expect := f.expect

	expect(0, "app", "create", "web", "--repo", remote.URL, "--path", "app", "--revision", "main",
		"--dest-server", "https://kubernetes.default.svc", "--dest-namespace", dest, "--label", "team=web")
	if out := expect(1, "app", "diff", "web"); !strings.Contains(out, "===== /ConfigMap "+dest+"/settings ======") || !strings.Contains(out, "+  v: one") {
		t.Errorf("diff before the first sync:\n%s", out)
	}
	out := expect(0, "app", "sync", "web")
	if !strings.Contains(out, "Phase:") || !strings.Contains(out, "Succeeded") || !strings.Contains(out, "settings") || !strings.Contains(out, first) {
		t.Errorf("sync output:\n%s", out)
	}
	expect(0, "app", "wait", "web", "--timeout", "60")
	if out := expect(0, "app", "diff", "web"); strings.TrimSpace(out) != "" {
		t.Errorf("diff of a synced app:\n%s", out)
	}

	// A change made in the cluster shows as a diff, live first.
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "edited"
	if err := f.c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if out := expect(1, "app", "diff", "web"); !strings.Contains(out, "-  v: edited") || !strings.Contains(out, "+  v: one") || strings.Contains(out, "\x1b[") {
		t.Errorf("diff after an edit in the cluster (not a terminal, so no colour):\n%s", out)
	}
	expect(2, "app", "diff", "missing")

	remote.Commit(t, "two", map[string]string{"app/cm.yaml": configMapYAML("two")})
	expect(0, "app", "sync", "web", "--timeout", "60")
	if out := expect(0, "app", "history", "web"); strings.Count(out, "main (") != 2 {
		t.Errorf("history:\n%s", out)
	}
	expect(0, "app", "rollback", "web", "--timeout", "60")
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, cm); err != nil || cm.Data["v"] != "one" {
		t.Errorf("after the rollback: %v %v", err, cm.Data)
	}

	if out := expect(0, "app", "get", "web", "-o", "tree"); !strings.Contains(out, "ConfigMap/settings") {
		t.Errorf("app get -o tree:\n%s", out)
	}
	if out := expect(0, "app", "resources", "web"); !strings.Contains(out, "ConfigMap  "+dest+"  settings") {
		t.Errorf("app resources:\n%s", out)
	}
	if out := expect(0, "app", "manifests", "web"); !strings.Contains(out, "v: two") {
		t.Errorf("app manifests (Git, at the target revision):\n%s", out)
	}
	if out := expect(0, "app", "manifests", "web", "--source", "live"); !strings.Contains(out, "v: one") {
		t.Errorf("app manifests --source live:\n%s", out)
	}
	if out := expect(0, "app", "list", "-l", "team=web", "-o", "name"); strings.TrimSpace(out) != f.ns+"/web" {
		t.Errorf("app list by label: %q", out)
	}
	if out := expect(0, "app", "list", "-P", "elsewhere", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("app list by another path: %q", out)
	}
	if out := expect(0, "app", "list", "--path", "app", "-o", "name"); strings.TrimSpace(out) != f.ns+"/web" {
		t.Errorf("app list by path: %q", out)
	}
	if out := expect(0, "app", "resources", "web", "-N", f.ns); !strings.Contains(out, "settings") {
		t.Errorf("app resources -N:\n%s", out)
	}

	expect(0, "app", "set", "web", "--sync-policy", "automated", "--self-heal", "--sync-option", "CreateNamespace=true")
	app := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, app); err != nil {
		t.Fatal(err)
	}
	if p := app.Spec.SyncPolicy; p == nil || p.Automated == nil || !p.Automated.SelfHeal || len(p.SyncOptions) != 1 {
		t.Errorf("after app set: %+v", app.Spec.SyncPolicy)
	}
	expect(1, "app", "rollback", "web") // refused while automated sync is on
	expect(1, "app", "terminate-op", "web")

	// Background: this cluster runs no garbage collector to finish a
	// foreground deletion.
	expect(0, "app", "delete", "web", "--propagation-policy", "background")
	eventually.String(t, "the cascading delete removes the ConfigMap", func() string {
		err := f.c.Get(ctx, client.ObjectKey{Namespace: dest, Name: "settings"}, cm)
		if apierrors.IsNotFound(err) {
			return ""
		}
		left := &v1alpha1.Application{}
		getErr := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web"}, left)
		return fmt.Sprintf("the ConfigMap: %v; application: %v %+v %+v", err, getErr, left.ObjectMeta, left.Status)
	})
}
