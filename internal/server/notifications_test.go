package server

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestNotificationLists: Argo CD's NotificationService lists the names
// argocd-notifications-cm defines, to a signed-in user only.
func TestNotificationLists(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	token := f.adminToken()
	type list struct {
		Items []struct{ Name string } `json:"items"`
	}
	names := func(path string) []string {
		t.Helper()
		var out list
		if code := f.call("GET", path, "", token, &out); code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		var got []string
		for _, i := range out.Items {
			got = append(got, i.Name)
		}
		return got
	}
	if got := names("/api/v1/notifications/triggers"); len(got) != 0 {
		t.Errorf("triggers before any are configured: %v", got)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.NotificationsConfigMap, Namespace: f.ns},
		Data: map[string]string{
			"service.slack": "token: $slack-token\n", "service.webhook.github": "url: https://api.github.com\n",
			"trigger.on-deployed": "- when: 'true'\n", "trigger.on-sync-failed": "- when: 'false'\n",
			"template.app-deployed": "message: hi\n", "context": "argocdUrl: https://cd.example.com\n",
		}}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]string{
		"/api/v1/notifications/services":  {"github", "slack"},
		"/api/v1/notifications/triggers":  {"on-deployed", "on-sync-failed"},
		"/api/v1/notifications/templates": {"app-deployed"},
	} {
		if got := names(path); len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	if code := f.call("GET", "/api/v1/notifications/services", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d", code)
	}
}
