package commands

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestAppSetNamespaceAndWait: appset create, get and delete take Argo CD
// 3.5's --appset-namespace (-N); create --wait returns once the
// ApplicationSet's Applications are up to date, delete --wait once it is
// gone.
func TestAppSetNamespaceAndWait(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- applicationset.Run(ctx, applicationset.Options{Config: kubeCluster.Config, Namespace: f.ns,
			Git: repo.NewService(repo.Options{Root: t.TempDir()}), Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}()
	t.Cleanup(func() { cancel(); <-done })
	file := filepath.Join(t.TempDir(), "appset.yaml")
	spec := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs}
spec:
  generators:
  - list: {elements: [{env: dev}]}
  template:
    metadata: {name: 'web-{{env}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web.git, path: '{{env}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{env}}'}
`
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	out := f.expect(0, "appset", "create", file, "-N", f.ns, "--wait")
	if !strings.Contains(out, `using --appset-namespace="`+f.ns+`"`) {
		t.Errorf("create -N:\n%s", out)
	}
	app := &v1alpha1.Application{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "web-dev"}, app); err != nil {
		t.Errorf("create --wait returned before the Application was written: %v", err)
	}
	if out := f.expect(0, "appset", "get", "envs", "--appset-namespace", f.ns); !strings.Contains(out, "envs") {
		t.Errorf("get -N:\n%s", out)
	}
	start := time.Now()
	f.expect(0, "appset", "delete", "envs", "-N", f.ns, "--yes", "--wait")
	err := f.c.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "envs"}, &v1alpha1.ApplicationSet{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("delete --wait returned after %s with the ApplicationSet still there: %v", time.Since(start), err)
	}
}
