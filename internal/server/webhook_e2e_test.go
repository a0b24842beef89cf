package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestWebhookSyncsThroughTheController wires the API server to a
// controller as capstan run does: with the periodic refresh and the
// repository poll both an hour away, only the webhook can bring the new
// commit in.
func TestWebhookSyncsThroughTheController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	c, err := kube.NewClient(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns, dest := cluster.NewNamespace(t), cluster.NewNamespace(t)
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "one", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: one}\n"})

	renderer := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Hour})
	changes := make(chan string, 8)
	runController(t, ns, renderer, changes)
	srv, err := New(ctx, Options{Client: c, Config: cluster.Config, Renderer: renderer, Namespace: ns, Insecure: true, RepoChanged: func(u string) { changes <- u }})
	if err != nil {
		t.Fatal(err)
	}

	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "hooked", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			Source:     &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", TargetRevision: "main"},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitRevision := func(rev string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := &v1alpha1.Application{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && got.Status.Sync.Revision == rev {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("still %s at %s, want Synced at %s", got.Status.Sync.Status, got.Status.Sync.Revision, rev)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitRevision(first)

	second := remote.Commit(t, "two", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: two}\n"})
	payload := fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"html_url":%q,"default_branch":"main"}}`, remote.URL)
	req := httptest.NewRequest("POST", "/api/webhook", strings.NewReader(payload))
	req.Header.Set("X-GitHub-Event", "push")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("webhook: %d %s", rec.Code, rec.Body)
	}
	waitRevision(second)
}
