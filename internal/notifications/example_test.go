package notifications_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/capstan-cd/capstan/internal/notifications"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Settings as argocd-notifications-cm holds them, an Application as the
// API server holds it: the subscribed webhook is told once.
func Example() {
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("%s %s %s\n", r.Method, r.URL.Path, body)
	}))
	defer hook.Close()

	cfg, err := notifications.Parse(&settings.Notifications{Data: map[string]string{
		"service.webhook.ci": "url: " + hook.URL + "\n",
		"trigger.on-synced":  "- when: app.status.sync.status == 'Synced'\n  send: [synced]\n",
		"template.synced":    "webhook:\n  ci:\n    method: POST\n    path: /deployed\n    body: '{{.app.metadata.name}} at {{.app.status.sync.revision}}'\n",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	app := map[string]any{
		"metadata": map[string]any{"name": "guestbook", "annotations": map[string]any{}},
		"status":   map[string]any{"sync": map[string]any{"status": "Synced", "revision": "4f3c2a1"}},
	}
	subs := cfg.SubscriptionsOf(nil, map[string]string{"notifications.argoproj.io/subscribe.on-synced.ci": ""}, nil)
	p := notifications.NewProcessor(cfg, nil, nil)
	state := notifications.State{}
	for range 2 { // the second look finds it told already
		if _, _, err := p.Process(context.Background(), app, subs, state); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(len(state), "entry in", notifications.AnnotationNotified)
	// Output:
	// POST /deployed guestbook at 4f3c2a1
	// 1 entry in notified.notifications.argoproj.io
}
