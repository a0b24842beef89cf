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
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// BenchmarkWebhookToSync measures, as capstan run wires it, the time from
// a GitHub push webhook reaching the API server to the Application being
// Synced at the pushed commit: the controller has found the commit,
// synced it and recorded the result, so the sync started sooner still.
// The periodic refresh and the repository poll are an hour away, so only
// the webhook can bring the commit in. Each iteration pushes one commit.
//
//	go test ./internal/server -run '^$' -bench WebhookToSync -benchtime 20x
func BenchmarkWebhookToSync(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := kube.InstallCRDs(ctx, cluster.Config); err != nil {
		b.Fatal(err)
	}
	c, err := kube.NewWatchClient(cluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	ns, dest := cluster.NewNamespace(b), cluster.NewNamespace(b)
	remote := gitserver.NewLocalRepo(b)
	rev := remote.Commit(b, "0", map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: \"0\"}\n"})

	renderer := repo.NewService(repo.Options{Root: b.TempDir(), RefsTTL: time.Hour})
	changes := make(chan string, 8)
	runController(b, ns, renderer, changes)
	srv, err := New(ctx, Options{Client: c, Config: cluster.Config, Renderer: renderer, Namespace: ns, Insecure: true,
		RepoChanged: func(u string) {
			select {
			case changes <- u:
			default:
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	// The name is unique per run: the tracking id names the app, not its
	// control namespace, and every run shares the cluster.
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "hooked-" + dest, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
			Source:     &v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "app", TargetRevision: "main"},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
	w, err := c.Watch(ctx, &v1alpha1.ApplicationList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	if err := c.Create(ctx, app); err != nil {
		b.Fatal(err)
	}
	// waitSynced returns when the app is Synced at rev.
	waitSynced := func(rev string) {
		timeout := time.After(60 * time.Second)
		for {
			select {
			case ev := <-w.ResultChan():
				a, ok := ev.Object.(*v1alpha1.Application)
				if !ok || ev.Type == watch.Deleted {
					continue
				}
				st := a.Status.OperationState
				if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Sync.Revision == rev && st != nil && st.Phase.Completed() &&
					st.SyncResult != nil && st.SyncResult.Revision == rev {
					return
				}
			case <-timeout:
				got := &v1alpha1.Application{}
				_ = c.Get(ctx, client.ObjectKeyFromObject(app), got)
				b.Fatalf("not Synced at %s after 60 s: %s at %s, operation %+v, resources %+v, conditions %+v", rev, got.Status.Sync.Status, got.Status.Sync.Revision, got.Status.OperationState, got.Status.Resources, got.Status.Conditions)
			}
		}
	}
	waitSynced(rev)

	var toSynced time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		rev = remote.Commit(b, fmt.Sprint(i+1), map[string]string{"app/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: \"%d\"}\n", i+1)})
		payload := fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"html_url":%q,"default_branch":"main"}}`, remote.URL)
		req := httptest.NewRequest("POST", "/api/webhook", strings.NewReader(payload))
		req.Header.Set("X-GitHub-Event", "push")
		rec := httptest.NewRecorder()
		b.StartTimer()
		received := time.Now()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("webhook: %d %s", rec.Code, rec.Body)
		}
		waitSynced(rev)
		toSynced += time.Since(received)
	}
	b.ReportMetric(float64(toSynced.Milliseconds())/float64(b.N), "ms-to-synced/op")
}
