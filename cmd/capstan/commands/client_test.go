package commands

import (
	"context"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func TestLoginAndAppList(t *testing.T) {
	localcluster.Need(t)
	ctx := context.Background()
	f := startCapstan(t, false)
	c, ns, run := f.c, f.ns, f.run
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "gb"},
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/gb.git", Path: "guestbook", TargetRevision: "main"}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	config := f.config
	addr := f.addr
	if code, _, stderr := run("login", addr, "--username", "admin", "--password", "wrong", "--insecure"); code != 1 || !strings.Contains(stderr, "Invalid username or password") {
		t.Errorf("a wrong password: exit %d, %q", code, stderr)
	}
	if code, _, stderr := run("app", "list"); code != 1 || !strings.Contains(stderr, "no current context") {
		t.Errorf("app list before login: exit %d, %q", code, stderr)
	}
	if code, stdout, stderr := run("login", addr, "--username", "admin", "--password", f.password, "--insecure"); code != 0 || !strings.Contains(stdout, "logged in successfully") {
		t.Fatalf("login: exit %d, %q %q", code, stdout, stderr)
	}
	if fi, err := os.Stat(config); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config file: %v %v, want mode 0600", err, fi)
	}
	code, stdout, stderr := run("app", "list")
	if code != 0 || !strings.Contains(stdout, ns+"/guestbook") || !strings.Contains(stdout, "https://git.example.com/gb.git") {
		t.Errorf("app list: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := run("app", "list", "-o", "name"); code != 0 || strings.TrimSpace(stdout) != ns+"/guestbook" {
		t.Errorf("app list -o name: %q", stdout)
	}
	if code, stdout, stderr := run("app", "get", "guestbook", "-o", "json"); code != 0 || !strings.Contains(stdout, `"path": "guestbook"`) {
		t.Errorf("app get: exit %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := run("app", "get", "nope"); code != 1 || !strings.Contains(stderr, "application nope not found") {
		t.Errorf("app get of a missing app: exit %d %q", code, stderr)
	}
	if code, stdout, stderr := run("app", "sync", "guestbook", "--prune", "--async"); code != 0 || !strings.Contains(stdout, "sync of guestbook started") {
		t.Errorf("app sync: exit %d %q %q", code, stdout, stderr)
	}
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil || got.Operation == nil || !got.Operation.Sync.Prune || got.Operation.InitiatedBy.Username != "admin" {
		t.Errorf("after app sync the operation is %+v (%v)", got.Operation, err)
	}
	if code, stdout, _ := run("context"); code != 0 || !strings.Contains(stdout, "*        "+addr) {
		t.Errorf("context: %q", stdout)
	}
	if code, _, stderr := run("context", "elsewhere"); code != 1 || !strings.Contains(stderr, `no context named "elsewhere"`) {
		t.Errorf("switching to an unknown context: %d %q", code, stderr)
	}
	if code, _, stderr := run("app", "delete", "guestbook", "--cascade=false"); code != 0 {
		t.Errorf("app delete: exit %d %q", code, stderr)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), &v1alpha1.Application{}); err == nil {
		t.Error("the app is still there after app delete --cascade=false")
	}
	if code, _, _ := run("logout"); code != 0 {
		t.Errorf("logout: %d", code)
	}
	if code, _, stderr := run("app", "list"); code != 1 || !strings.Contains(stderr, "HTTP 401") {
		t.Errorf("app list after logout: exit %d %q, want 401", code, stderr)
	}
}
