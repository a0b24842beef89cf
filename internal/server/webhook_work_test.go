package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestWebhookRefreshJitter: with webhook.refresh.jitter set, a push
// refreshes the threshold's number of its followers at once and the
// others later, each after its own random wait.
func TestWebhookRefreshJitter(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	f := start(t, false)
	for i := range 4 {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: f.ns},
			Spec: v1alpha1.ApplicationSpec{Project: "default", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc"},
				Source: &v1alpha1.ApplicationSource{RepoURL: "https://gitea.example.com/org/mono", TargetRevision: "main"}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	setJitter := func(jitter string) {
		t.Helper()
		if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
			Data: map[string]string{"webhook.refresh.jitter": jitter, "webhook.refresh.jitter.threshold": "1"}}); err != nil {
			t.Fatal(err)
		}
	}
	refreshed := func() int {
		var list v1alpha1.ApplicationList
		if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range list.Items {
			if _, ok := a.Annotations[v1alpha1.AnnotationRefresh]; ok {
				n++
			}
		}
		return n
	}
	push := func() {
		t.Helper()
		body := `{"ref":"refs/heads/main","repository":{"html_url":"https://gitea.example.com/org/mono"},"commits":[]}`
		if code := f.post(body, map[string]string{"X-Gitea-Event": "push"}); code != 200 {
			t.Fatalf("push: %d", code)
		}
	}

	setJitter("1h") // the three beyond the threshold wait longer than the test
	push()
	if n := refreshed(); n != 1 {
		t.Fatalf("%d refreshed at once, want the threshold's 1", n)
	}

	setJitter("50ms")
	push()
	deadline := time.Now().Add(30 * time.Second)
	for refreshed() < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := refreshed(); n != 4 {
		t.Errorf("%d refreshed after the jitter, want all 4", n)
	}
}

// TestWebhookParallelism: beyond server.webhook.parallelism.limit, a
// webhook waits for a turn, and gives up when its request ends.
func TestWebhookParallelism(t *testing.T) {
	w := newWebhookWork(context.Background(), 1, 1)
	done, err := w.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := w.enter(ctx); err == nil {
		t.Fatal("a second webhook got a turn while the only one was taken")
	}
	done()
	again, err := w.enter(context.Background())
	if err != nil {
		t.Fatalf("the turn was not given back: %v", err)
	}
	again()
	if d := newWebhookWork(context.Background(), 0, 0); cap(d.requests) != defaultWebhookParallelism || cap(d.refreshes) != defaultWebhookRefreshWorkers {
		t.Errorf("defaults %d/%d, want Argo CD's 50/20", cap(d.requests), cap(d.refreshes))
	}
}
