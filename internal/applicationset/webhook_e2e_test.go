package applicationset_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/giteaserver"
)

// TestGiteaPushWebhook: a real Gitea sends its push event to the API
// server's webhook endpoint, which marks the ApplicationSet whose git
// generator reads the pushed branch; the controller regenerates it at
// once — its own period is an hour — and the new directory's Application
// appears. The time from the commit to the Application is logged.
func TestGiteaPushWebhook(t *testing.T) {
	e := start(t, func(o *applicationset.Options) {
		o.Git = repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Hour})
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, server.Options{Client: e.client, Config: testCluster.Config, Namespace: e.ns, Insecure: true,
		Renderer: repo.NewService(repo.Options{Root: t.TempDir()}), Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, l) }()
	secret := &corev1.Secret{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: settings.ServerSecretName}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["webhook.gitea.secret"] = []byte("hook-s3cret")
	if err := e.client.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}

	gt := giteaserver.Start(t)
	gt.Org(t, "shop")
	apps := gt.Repo(t, "shop", "apps", map[string]string{"apps/web/kustomization.yaml": "resources: []\n"})
	gt.Webhook(t, "shop", "apps", "http://"+l.Addr().String()+"/api/webhook", "hook-s3cret")
	as := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "dirs", Namespace: e.ns}, Spec: v1alpha1.ApplicationSetSpec{
		Generators: []v1alpha1.ApplicationSetGenerator{{ApplicationSetTerminalGenerator: v1alpha1.ApplicationSetTerminalGenerator{
			Git: &v1alpha1.GitGenerator{RepoURL: apps.CloneURL, Revision: "HEAD", RequeueAfterSeconds: ptr.To[int64](3600),
				Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "apps/*"}}}}}},
		Template: v1alpha1.ApplicationSetTemplate{ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{path.basename}}"},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: apps.CloneURL, Path: "{{path}}"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "{{path.basename}}"}}},
	}}
	if err := e.client.Create(ctx, as); err != nil {
		t.Fatal(err)
	}
	e.waitApps("web")
	marked := make(chan time.Time, 1)
	go func() { // when the webhook's mark lands, for the log
		for ctx.Err() == nil {
			var got v1alpha1.ApplicationSet
			if e.client.Get(ctx, client.ObjectKeyFromObject(as), &got) == nil && got.Annotations[v1alpha1.AnnotationApplicationSetRefresh] != "" {
				marked <- time.Now()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	pushed := time.Now()
	gt.File(t, "shop", "apps", "main", "", "apps/api/kustomization.yaml", "resources: []\n")
	e.waitApps("web", "api")
	done := time.Since(pushed)
	select {
	case at := <-marked:
		t.Logf("the pushed directory's Application %s after the commit (the webhook's mark after %s)",
			done.Round(time.Millisecond), at.Sub(pushed).Round(time.Millisecond))
	default:
		t.Logf("the pushed directory's Application %s after the commit", done.Round(time.Millisecond))
	}
}
