package notifications

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/capstan-cd/capstan/internal/settings"
)

// TestArgoCDCatalogTeamsAndSlack: Argo CD's catalog, unchanged, sends its
// teams and slack parts for on-sync-succeeded and on-health-degraded
// through the notifications-engine's Teams and Slack senders to local
// servers speaking their APIs.
func TestArgoCDCatalogTeamsAndSlack(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string][]string{}
	serve := func(name, answer string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies[name] = append(bodies[name], string(data))
			mu.Unlock()
			_, _ = io.WriteString(w, answer)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	slackURL := serve("slack", `{"ok":true,"channel":"C1","ts":"1700000000.000100"}`)
	teamsURL := serve("teams", "1")
	data := catalog(t)
	data["service.slack"] = "token: $slack-token\napiURL: " + slackURL + "/api/\n"
	data["service.teams"] = "recipientUrls:\n  ops: $teams-url\n"
	data["context"] = "argocdUrl: https://cd.example.com\n"
	cfg, err := Parse(&settings.Notifications{Data: data, Secrets: map[string]string{"slack-token": "xoxb-1", "teams-url": teamsURL + "/webhookb2/ops"}})
	if err != nil {
		t.Fatal(err)
	}
	app := loadApp(t)
	setPath(app, "Degraded", "status", "health", "status")
	to := []Destination{{Service: "slack", Recipient: "deploys"}, {Service: "teams", Recipient: "ops"}}
	subs := Subscriptions{"on-sync-succeeded": to, "on-health-degraded": to}
	deliveries, _, err := NewProcessor(cfg, nil, nil).Process(context.Background(), app, subs, State{})
	if err != nil {
		t.Fatal(err)
	}
	if len(deliveries) != 4 {
		t.Fatalf("%d deliveries, want 4", len(deliveries))
	}
	for _, d := range deliveries {
		if d.Err != nil {
			t.Errorf("%s to %s: %v", d.Trigger, d.Destination.Service, d.Err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for service, wants := range map[string][]string{
		"teams": {`"title":"Application guestbook has degraded."`, `"themeColor":"#FF0000"`, `"name":"Health Status"`, "successfully synced"},
		"slack": {"has+degraded", "successfully+synced", "attachments="},
	} {
		all := strings.Join(bodies[service], "\n")
		for _, want := range wants {
			if !strings.Contains(all, want) {
				t.Errorf("%s never got %q:\n%s", service, want, all)
			}
		}
	}
}

// TestSlackThreads: notifications of one groupingKey go to one Slack
// thread: the first starts it, the next replies to it (and, with
// notifyBroadcast, to the channel too); with PostAndUpdate the next also
// updates the thread's first message, as the engine's Slack sender does.
func TestSlackThreads(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.URL.Path+"?"+string(data))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1700000000.000100"}`)
	}))
	defer srv.Close()
	cfg, err := Parse(&settings.Notifications{Data: map[string]string{
		"service.slack": "token: xoxb-1\napiURL: " + srv.URL + "/api/\n",
		"template.threaded": "message: '{{.app.metadata.name}} {{.app.status.sync.status}}'\n" +
			"slack:\n  groupingKey: '{{.app.metadata.name}}'\n  notifyBroadcast: true\n",
		"template.updated": "message: '{{.app.metadata.name}} now {{.app.status.health.status}}'\n" +
			"slack:\n  groupingKey: 'health-{{.app.metadata.name}}'\n  deliveryPolicy: PostAndUpdate\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(cfg, nil, nil)
	app := loadApp(t)
	to := Destination{Service: "slack", Recipient: "deploys"}
	for _, tmpl := range []string{"threaded", "threaded", "updated", "updated"} {
		if err := p.Send(context.Background(), app, []string{tmpl}, to); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 5 {
		t.Fatalf("%d calls: %v", len(calls), calls)
	}
	if strings.Contains(calls[0], "thread_ts") || !strings.Contains(calls[1], "thread_ts=1700000000.000100") || !strings.Contains(calls[1], "reply_broadcast=true") {
		t.Errorf("the thread: %v", calls[:2])
	}
	if strings.Contains(calls[2], "thread_ts") || !strings.Contains(calls[3], "thread_ts=1700000000.000100") ||
		!strings.HasPrefix(calls[4], "/api/chat.update") || !strings.Contains(calls[4], "ts=1700000000.000100") {
		t.Errorf("PostAndUpdate: %v", calls[2:])
	}
}
