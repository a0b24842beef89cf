package notifications

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// receiver is a real HTTP server that records the requests it gets and
// answers each with the next status of answers (200 once they run out).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
	answers  []int
}

type request struct {
	Method, Path, Body, Auth, Header string
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	r := &receiver{answers: answers}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.requests = append(r.requests, request{req.Method, req.URL.Path, string(body), req.Header.Get("Authorization"), req.Header.Get("X-Team")})
		status := http.StatusOK
		if len(r.answers) > 0 {
			status, r.answers = r.answers[0], r.answers[1:]
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.requests...)
}

func loadApp(t *testing.T) map[string]any { return loadAppB(t) }

func loadAppB(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app := map[string]any{}
	if err := yaml.Unmarshal(data, &app); err != nil {
		t.Fatal(err)
	}
	return app
}

func setPath(obj map[string]any, value any, path ...string) {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
}

func TestWebhookOncePerCondition(t *testing.T) {
	hook := newReceiver(t)
	cfg, err := Parse(&settings.Notifications{
		Data: map[string]string{
			"service.webhook.ci": "url: " + hook.URL + "/hooks/\nheaders:\n- {name: X-Team, value: $team}\nbasicAuth: {username: cd, password: $password}\n",
			"trigger.on-synced":  "- when: app.status.sync.status == 'Synced'\n  send: [synced]\n",
			"template.synced":    "webhook:\n  ci:\n    method: POST\n    path: /{{.app.metadata.name}}\n    body: '{\"rev\": \"{{.app.status.sync.revision}}\", \"url\": \"{{.context.argocdUrl}}\"}'\n",
		},
		Secrets: map[string]string{"team": "web", "password": "pw"},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(cfg, nil, NewMetrics())
	app := loadApp(t)
	subs := cfg.SubscriptionsOf(nil, map[string]string{"notifications.argoproj.io/subscribe.on-synced.ci": ""}, nil)
	state := State{}
	ctx := context.Background()

	deliveries, changed, err := p.Process(ctx, app, subs, state)
	if err != nil || !changed || len(deliveries) != 1 || deliveries[0].Err != nil {
		t.Fatalf("first pass: %+v, changed %v, %v", deliveries, changed, err)
	}
	got := hook.got()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	want := request{Method: "POST", Path: "/hooks/guestbook", Body: `{"rev": "1111111111111111111111111111111111111111", "url": "https://localhost:4000"}`, Auth: "Basic Y2Q6cHc=", Header: "web"}
	if got[0] != want {
		t.Errorf("request %+v, want %+v", got[0], want)
	}

	// Told once: the same state sends nothing more.
	if deliveries, changed, _ := p.Process(ctx, app, subs, state); len(deliveries) != 0 || changed {
		t.Errorf("second pass sent %v", deliveries)
	}
	// The condition stops holding, then holds again: told again.
	setPath(app, "OutOfSync", "status", "sync", "status")
	if _, changed, _ := p.Process(ctx, app, subs, state); !changed || len(state) != 0 {
		t.Errorf("a condition that stopped holding is remembered: %v", state)
	}
	setPath(app, "Synced", "status", "sync", "status")
	_, _, _ = p.Process(ctx, app, subs, state)
	if n := len(hook.got()); n != 2 {
		t.Errorf("%d requests after the condition held again, want 2", n)
	}
}

func TestWebhookRetriesAndFailures(t *testing.T) {
	flaky := newReceiver(t, http.StatusServiceUnavailable, http.StatusTooManyRequests)
	broken := newReceiver(t, http.StatusBadRequest)
	cfg, err := Parse(&settings.Notifications{Data: map[string]string{
		"service.webhook.flaky":  "url: " + flaky.URL + "\nretryWaitMin: 10ms\nretryWaitMax: 20ms\n",
		"service.webhook.broken": "url: " + broken.URL + "?token=s3cret\n",
		"service.webhook.ftp":    "url: ftp://example.com/\n",
		"trigger.on-created":     "- when: 'true'\n  send: [created]\n",
		"template.created":       "message: created {{.app.metadata.name}}\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(cfg, nil, nil)
	subs := Subscriptions{"on-created": {{"flaky", ""}, {"broken", ""}, {"ftp", ""}, {"teams", "x"}}}
	state := State{}
	deliveries, _, _ := p.Process(context.Background(), loadApp(t), subs, state)
	errs := map[string]string{}
	for _, d := range deliveries {
		if d.Err != nil {
			errs[d.Destination.Service] = d.Err.Error()
		}
	}
	if _, failed := errs["flaky"]; failed || len(flaky.got()) != 3 {
		t.Errorf("flaky: %d requests, error %q", len(flaky.got()), errs["flaky"])
	}
	if req := flaky.got()[2]; req.Method != "GET" || req.Body != "created guestbook" {
		t.Errorf("a webhook without a webhook part got %+v, want GET with the message", req)
	}
	if e := errs["broken"]; !strings.Contains(e, "400") || strings.Contains(e, "s3cret") || len(broken.got()) != 1 {
		t.Errorf("broken: %d requests, error %q (a 400 is not retried, the query never shown)", len(broken.got()), e)
	}
	if e := errs["ftp"]; !strings.Contains(e, "want http or https") {
		t.Errorf("ftp: %q", e)
	}
	if e := errs["teams"]; !strings.Contains(e, "not supported or configured") {
		t.Errorf("teams: %q", e)
	}
	// Only the delivered one is remembered; the others are tried again.
	if len(state) != 1 {
		t.Errorf("state %v", state)
	}
}

// catalog reads Argo CD's notifications catalog (argocd-notifications-cm
// with its triggers and templates), which make argocd-manifests copies.
func catalog(t testing.TB) map[string]string {
	t.Helper()
	dir := toolbin.Find(t, "CAPSTAN_ARGOCD_MANIFESTS", "bin/argocd-manifests", "argocd-manifests")
	data, err := os.ReadFile(filepath.Join(dir, "notifications-catalog.yaml"))
	if err != nil {
		t.Fatalf("%v (run make argocd-manifests)", err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// TestArgoCDCatalog: Argo CD's own catalog parses, every trigger
// evaluates, the triggers of a fresh successful sync fire once each, and
// the Slack message's attachments are valid JSON.
func TestArgoCDCatalog(t *testing.T) {
	slackAPI := newReceiver(t)
	data := catalog(t)
	data["service.slack"] = "token: $slack-token\napiURL: " + slackAPI.URL + "/api/\n"
	data["context"] = "argocdUrl: https://cd.example.com\n"
	cfg, err := Parse(&settings.Notifications{Data: data, Secrets: map[string]string{"slack-token": "xoxb-1"}})
	if err != nil {
		t.Fatalf("Argo CD's catalog: %v", err)
	}
	if len(cfg.Triggers) < 8 || len(cfg.Templates) < 8 {
		t.Fatalf("%d triggers, %d templates", len(cfg.Triggers), len(cfg.Templates))
	}
	subs := Subscriptions{}
	for name := range cfg.Triggers {
		subs[name] = []Destination{{Service: "slack", Recipient: "deploys"}}
	}
	p := NewProcessor(cfg, nil, nil)
	state := State{}
	app := loadApp(t)
	deliveries, _, err := p.Process(context.Background(), app, subs, state)
	if err != nil {
		t.Fatalf("evaluating the catalog: %v", err)
	}
	fired := map[string]bool{}
	for _, d := range deliveries {
		if d.Err != nil {
			t.Errorf("%s: %v", d.Trigger, d.Err)
		}
		fired[d.Trigger] = true
	}
	for _, want := range []string{"on-created", "on-deployed", "on-sync-succeeded"} {
		if !fired[want] {
			t.Errorf("%s did not fire", want)
		}
	}
	if len(fired) != 3 {
		t.Errorf("fired %v, want on-created, on-deployed and on-sync-succeeded", fired)
	}
	synced := false
	for _, req := range slackAPI.got() {
		// Slack's Web API takes a form whose attachments are JSON.
		form, err := url.ParseQuery(req.Body)
		if err != nil {
			t.Fatalf("the Slack request is not a form: %v", err)
		}
		var msg struct {
			Channel, Text string
			Attachments   []map[string]any
		}
		msg.Channel, msg.Text = form.Get("channel"), form.Get("text")
		if a := form.Get("attachments"); a != "" {
			if err := json.Unmarshal([]byte(a), &msg.Attachments); err != nil {
				t.Fatalf("the Slack attachments are not JSON: %v", err)
			}
		}
		if req.Path != "/api/chat.postMessage" || (req.Auth != "Bearer xoxb-1" && form.Get("token") != "xoxb-1") || msg.Channel != "deploys" || !strings.Contains(msg.Text, "guestbook") {
			t.Errorf("Slack request %+v", req)
		}
		if strings.Contains(msg.Text, "successfully synced") {
			synced = true
			if !strings.Contains(msg.Text, "https://cd.example.com/applications/guestbook?operation=true") || len(msg.Attachments) != 1 ||
				msg.Attachments[0]["title_link"] != "https://cd.example.com/applications/guestbook" {
				t.Errorf("sync succeeded: %q with attachments %v", msg.Text, msg.Attachments)
			}
		}
	}
	if !synced {
		t.Error("no sync-succeeded message reached Slack")
	}
	if deliveries, _, _ := p.Process(context.Background(), app, subs, state); len(deliveries) != 0 {
		t.Errorf("a second look sent %d more", len(deliveries))
	}
	// A new revision deployed: on-deployed and on-sync-succeeded once more.
	setPath(app, "2222222222222222222222222222222222222222", "status", "operationState", "syncResult", "revision")
	deliveries, _, _ = p.Process(context.Background(), app, subs, state)
	if len(deliveries) != 2 {
		t.Errorf("a new revision sent %d, want 2", len(deliveries))
	}
}
