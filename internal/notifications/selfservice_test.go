package notifications_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// TestSelfServiceNotifications: with self-service notifications, two
// namespaces configure a webhook service of the same name in their own
// argocd-notifications-cm; each Application is told through its own
// namespace's service only, and its notified state names the namespace.
func TestSelfServiceNotifications(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clusterClient(t, ctx)
	control, teamA, teamB := testCluster.NewNamespace(t), testCluster.NewNamespace(t), testCluster.NewNamespace(t)
	if err := settings.EnsureDefaultProject(ctx, c, control); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: control, Name: "default"}, proj); err != nil {
		t.Fatal(err)
	}
	proj.Spec.SourceNamespaces = []string{teamA, teamB}
	if err := c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	servers := map[string]*hooks{}
	for _, ns := range []string{teamA, teamB} {
		h := &hooks{}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		servers[ns] = h
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsSecret, Namespace: ns},
			StringData: map[string]string{"hook-url": srv.URL}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: ns}, Data: map[string]string{
			"service.webhook.team": "url: $hook-url\n",
			"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
				"  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
			"template.synced": "webhook:\n  team:\n    method: POST\n    body: '" + ns + " {{.app.metadata.name}}'\n",
		}}); err != nil {
			t.Fatal(err)
		}
		createSynced(t, ctx, c, "web", ns, map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.team": ""}, "r1")
	}
	done := make(chan error, 1)
	go func() {
		done <- notifications.Run(ctx, notifications.Options{Config: testCluster.Config, Namespace: control,
			ApplicationNamespaces: []string{teamA, teamB}, SelfService: true, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for ns, h := range servers {
		eventually.String(t, "the notification of "+ns, func() string {
			if got := h.got(); len(got) != 1 || got[0] != "POST / "+ns+" web" {
				return strings.Join(got, " | ")
			}
			return ""
		})
		eventually.String(t, "the notified state of "+ns+" naming its settings", func() string {
			app := &v1alpha1.Application{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, app); err != nil {
				t.Fatal(err)
			}
			if state := app.Annotations[notifications.AnnotationNotified]; !strings.Contains(state, `"r1:`+ns+`:on-sync-succeeded:`) {
				return state
			}
			return ""
		})
	}
	time.Sleep(time.Second) // room for a message to the wrong namespace's service
	for ns, h := range servers {
		if got := h.got(); len(got) != 1 {
			t.Errorf("%s's service got %v", ns, got)
		}
	}
}

// TestSelfServiceSettingsAreATenants are the smaller findings of the
// second tenant review on self-service notifications: a namespace's own
// webhook that fails never has its answer (an internal service's, say)
// copied into the Application's Events, and its awssqs and gcppubsub
// services may not act as the controller's cloud identity.
func TestSelfServiceSettingsAreATenants(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clusterClient(t, ctx)
	control, team := testCluster.NewNamespace(t), testCluster.NewNamespace(t)
	if err := settings.EnsureDefaultProject(ctx, c, control); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: control, Name: "default"}, proj); err != nil {
		t.Fatal(err)
	}
	proj.Spec.SourceNamespaces = []string{team}
	if err := c.Update(ctx, proj); err != nil {
		t.Fatal(err)
	}
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal-only: db password hunter2", http.StatusInternalServerError)
	}))
	t.Cleanup(internal.Close)
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: team}, Data: map[string]string{
		"service.webhook.probe": "url: " + internal.URL + "\nretryMax: 1\nretryWaitMin: 10ms\nretryWaitMax: 10ms\n",
		"service.awssqs":        "region: us-east-1\nqueue: q\n",
		"service.gcppubsub":     "project: p\ntopic: t\n",
		"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
			"  send: [synced]\n",
		"template.synced": "message: synced\n",
	}}); err != nil {
		t.Fatal(err)
	}
	app := createSynced(t, ctx, c, "web", team, map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.probe":     "",
		"notifications.argoproj.io/subscribe.on-sync-succeeded.awssqs":    "q",
		"notifications.argoproj.io/subscribe.on-sync-succeeded.gcppubsub": "t",
	}, "r1")
	done := make(chan error, 1)
	go func() {
		done <- notifications.Run(ctx, notifications.Options{Config: testCluster.Config, Namespace: control,
			ApplicationNamespaces: []string{team}, SelfService: true, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	}()
	t.Cleanup(func() { cancel(); <-done })
	want := map[string]string{"probe": "500 Internal Server Error", "awssqs": "needs its own key and secret", "gcppubsub": "not available to self-service"}
	eventually.String(t, "a failure Event per service", func() string {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(team)); err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		var seen []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name != app.Name || e.Reason != "NotificationFailed" {
				continue
			}
			if strings.Contains(e.Message, "hunter2") || strings.Contains(e.Message, "internal-only") {
				t.Fatalf("an Event quotes the internal answer: %s", e.Message)
			}
			for svc, says := range want {
				if strings.Contains(e.Message, "notify "+svc+":") && strings.Contains(e.Message, says) {
					found[svc] = true
				}
			}
			seen = append(seen, e.Message)
		}
		if len(found) != len(want) {
			return strings.Join(seen, " | ")
		}
		return ""
	})
}
