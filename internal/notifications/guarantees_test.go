package notifications_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// TestDeliveryGuarantees: of three services one Application is told
// through, one hangs and one fails once. The third is told while the
// hanging one still holds its request, and so is another Application
// synced meanwhile (one processor: the hanging delivery goes on in the
// background); the failure is a NotificationFailed Event on the
// Application that does not show the webhook's secret path, and the
// failed delivery is made once its service's backoff has passed.
func TestDeliveryGuarantees(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clusterClient(t, ctx)
	ns := testCluster.NewNamespace(t)
	release := make(chan struct{})
	var hanging atomic.Bool
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hanging.Store(true)
		defer hanging.Store(false)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	fast := &hooks{}
	fastSrv := httptest.NewServer(fast)
	defer fastSrv.Close()
	var flakyCalls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if flakyCalls.Add(1) == 1 {
			http.Error(w, "refused for a moment", http.StatusBadRequest) // not retried by the webhook itself
		}
	}))
	defer flaky.Close()

	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsSecret, Namespace: ns},
		StringData: map[string]string{"flaky-url": flaky.URL + "/hooks/s3cret-path"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: ns}, Data: map[string]string{
		"service.webhook.hang": "url: " + hang.URL + "\n", "service.webhook.fast": "url: " + fastSrv.URL + "\n", "service.webhook.flaky": "url: $flaky-url\n",
		"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
			"  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
		"template.synced": "webhook:\n  hang: {method: POST, body: hang}\n  fast: {method: POST, body: fast}\n  flaky: {method: POST, body: flaky}\n",
	}}); err != nil {
		t.Fatal(err)
	}
	subscribe := map[string]string{}
	for _, s := range []string{"hang", "fast", "flaky"} {
		subscribe["notifications.argoproj.io/subscribe.on-sync-succeeded."+s] = ""
	}
	synced := func(name string, subscribe map[string]string) {
		t.Helper()
		createSynced(t, ctx, c, name, ns, subscribe, "r1")
	}
	synced("web", subscribe)
	metrics := notifications.NewMetrics()
	done := make(chan error, 1)
	go func() {
		done <- notifications.Run(ctx, notifications.Options{Config: testCluster.Config, Namespace: ns, Resync: time.Second, Metrics: metrics,
			Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}) // late deliveries may log after the test
	}()
	t.Cleanup(func() { cancel(); <-done })

	eventually.True(t, "the fast service told while the hanging one holds its request", func() bool {
		return len(fast.got()) == 1 && hanging.Load()
	})
	synced("other", map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.fast": ""})
	eventually.True(t, "another Application told while the hanging request is still held", func() bool {
		return len(fast.got()) == 2 && hanging.Load()
	})
	close(release)
	eventually.String(t, "the failure as an Event on the Application", func() string {
		var list corev1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		for _, e := range list.Items {
			if e.Reason == "NotificationFailed" && e.InvolvedObject.Name == "web" && strings.Contains(e.Message, "flaky") {
				if strings.Contains(e.Message, "s3cret-path") {
					t.Fatalf("the Event shows the webhook's secret path: %s", e.Message)
				}
				return ""
			}
		}
		return "no NotificationFailed Event"
	})
	eventually.True(t, "the failed delivery made after its backoff", func() bool { return flakyCalls.Load() == 2 })
	eventually.String(t, "deliveries and their latency in the metrics", func() string {
		rec := httptest.NewRecorder()
		metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		for _, want := range []string{
			`argocd_notifications_deliveries_total{service="flaky",succeeded="false",trigger="on-sync-succeeded"} 1`,
			`argocd_notifications_deliveries_total{service="flaky",succeeded="true",trigger="on-sync-succeeded"} 1`,
			`argocd_notifications_deliveries_total{service="fast",succeeded="true",trigger="on-sync-succeeded"} 2`,
			`capstan_notifications_delivery_duration_seconds_count{service="fast"} 2`,
		} {
			if !strings.Contains(rec.Body.String(), want) {
				return "no " + want
			}
		}
		return ""
	})
}

// TestNoSecondSendAfterAKill: the controller is stopped the moment a
// webhook receives its notification, before it can note anything after
// the send; restarted, it sends nothing twice, since what it was about to
// send was stored first.
func TestNoSecondSendAfterAKill(t *testing.T) {
	ctx := context.Background()
	c := clusterClient(t, ctx)
	ns := testCluster.NewNamespace(t)
	var calls atomic.Int32
	var kill atomic.Pointer[context.CancelFunc]
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if k := kill.Load(); k != nil {
			(*k)() // the controller goes the moment the notification lands
		}
	}))
	defer hook.Close()
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: ns}, Data: map[string]string{
		"service.webhook.hook": "url: " + hook.URL + "\n",
		"trigger.on-sync-succeeded": "- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n" +
			"  oncePer: app.status.operationState?.syncResult?.revision\n  send: [synced]\n",
		"template.synced": "webhook:\n  hook: {method: POST, body: synced}\n",
	}}); err != nil {
		t.Fatal(err)
	}
	createSynced(t, ctx, c, "web", ns, map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.hook": ""}, "r1")
	run := func() (context.CancelFunc, chan error) {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- notifications.Run(rctx, notifications.Options{Config: testCluster.Config, Namespace: ns, Resync: time.Second,
				Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}) // late deliveries may log after the test
		}()
		return cancel, done
	}
	cancel, done := run()
	kill.Store(&cancel)
	<-done // stopped by the webhook's first call
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d calls before the kill", n)
	}
	kill.Store(nil)
	cancel, done = run()
	time.Sleep(3 * time.Second) // three resyncs, room for a second send that must not come
	cancel()
	<-done
	if n := calls.Load(); n != 1 {
		t.Errorf("the restarted controller sent %d notifications in all, want the one", n)
	}
}
