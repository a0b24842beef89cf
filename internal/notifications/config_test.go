package notifications

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/settings"
)

func TestParse(t *testing.T) {
	cfg, err := Parse(&settings.Notifications{
		Data: map[string]string{
			"trigger.on-good":     "- when: app.status.sync.status == 'Synced'\n  send: [good]\n",
			"trigger.on-bad":      "- when: app.status.sync.status ==\n  send: [good]\n",
			"template.good":       "message: '{{.app.metadata.name}}'\n",
			"template.broken":     "message: '{{.app.metadata.name'\n",
			"service.webhook.ci":  "url: https://ci.example.com/$token/x\nheaders:\n- name: Authorization\n  value: Bearer $token\n- name: Other\n  value: $missing\n",
			"service.email":       "host: smtp.example.com\nport: 587\nfrom: $from\n",
			"context":             "argocdUrl: https://cd.example.com\nenv: prod\n",
			"defaultTriggers":     "- on-good\n",
			"defaultTriggers.ci":  "- on-bad\n",
			"subscriptions":       "- recipients: [email:ops@example.com]\n  selector: team=ops\n",
			"unrelated.other.key": "x",
		},
		Secrets: map[string]string{"token": "s3cret", "from": "cd@example.com"},
	})
	if err == nil {
		t.Fatal("no error for the bad trigger and template")
	}
	for _, bad := range []string{"trigger.on-bad", "template.broken"} {
		if !strings.Contains(err.Error(), bad) {
			t.Errorf("the error does not name %s: %v", bad, err)
		}
	}
	if _, ok := cfg.Triggers["on-good"]; !ok {
		t.Error("a good trigger was dropped with the bad one")
	}
	if _, ok := cfg.Templates["good"]; !ok {
		t.Error("a good template was dropped with the bad one")
	}
	ci := cfg.Services["ci"]
	if ci.Type != "webhook" {
		t.Fatalf("service.webhook.ci: %+v", ci)
	}
	var opts webhookOptions
	if err := yaml.Unmarshal(ci.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if opts.URL != "https://ci.example.com/s3cret/x" || opts.Headers[0].Value != "Bearer s3cret" || opts.Headers[1].Value != "$missing" {
		t.Errorf("$key references: %+v", opts)
	}
	if e := cfg.Services["email"]; e.Type != "email" || !strings.Contains(string(e.Options), "cd@example.com") {
		t.Errorf("service.email: %+v", e)
	}
	if cfg.Context["argocdUrl"] != "https://cd.example.com" || cfg.Context["env"] != "prod" {
		t.Errorf("context: %v", cfg.Context)
	}
	if got := cfg.defaultTriggers("ci"); len(got) != 1 || got[0] != "on-bad" {
		t.Errorf("defaultTriggers.ci: %v", got)
	}
	if got := cfg.defaultTriggers("email"); len(got) != 1 || got[0] != "on-good" {
		t.Errorf("defaultTriggers: %v", got)
	}
}

func TestContextDefault(t *testing.T) {
	cfg, err := Parse(&settings.Notifications{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Context["argocdUrl"] != "https://localhost:4000" {
		t.Errorf("argocdUrl defaults to %q", cfg.Context["argocdUrl"])
	}
}

func TestSubscriptionsOf(t *testing.T) {
	cfg, err := Parse(&settings.Notifications{Data: map[string]string{
		"service.webhook.ci": "url: https://ci.example.com\n",
		"defaultTriggers":    "- on-created\n- on-deleted\n",
		"defaultTriggers.ci": "- on-deployed\n",
		"subscriptions": `
- recipients: [slack:ops, email:ops@example.com]
  triggers: [on-sync-failed]
  selector: team=ops
- recipients: [slack:all]
`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		labels    map[string]string
		app, proj map[string]string
		want      Subscriptions
	}{
		{
			name: "trigger and service, recipients split by semicolons",
			app:  map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": " a; b ;;"},
			want: Subscriptions{"on-sync-succeeded": {{"slack", "a"}, {"slack", "b"}}, "on-created": {{"slack", "all"}}, "on-deleted": {{"slack", "all"}}},
		},
		{
			name: "a webhook needs no recipient; a service's default triggers",
			app:  map[string]string{"notifications.argoproj.io/subscribe.ci": ""},
			want: Subscriptions{"on-deployed": {{"ci", ""}}, "on-created": {{"slack", "all"}}, "on-deleted": {{"slack", "all"}}},
		},
		{
			name:   "the project's subscriptions and the default ones by selector",
			labels: map[string]string{"team": "ops"},
			proj:   map[string]string{"notifications.argoproj.io/subscribe.on-health-degraded.email": "lead@example.com"},
			want: Subscriptions{
				"on-health-degraded": {{"email", "lead@example.com"}},
				"on-sync-failed":     {{"slack", "ops"}, {"email", "ops@example.com"}},
				"on-created":         {{"slack", "all"}}, "on-deleted": {{"slack", "all"}},
			},
		},
		{
			name: "the YAML annotation, deduplicated with the others",
			app: map[string]string{
				"notifications.argoproj.io/subscriptions":              "- trigger: [on-created]\n  destinations:\n  - service: slack\n    recipients: [all, dev]\n",
				"notifications.argoproj.io/subscribe.on-created.slack": "dev",
			},
			want: Subscriptions{"on-created": {{"slack", "all"}, {"slack", "dev"}}, "on-deleted": {{"slack", "all"}}},
		},
		{
			name: "a YAML annotation that does not parse is skipped",
			app:  map[string]string{"notifications.argoproj.io/subscriptions": "- [", "notifications.argoproj.io/subscribe.": "x"},
			want: Subscriptions{"on-created": {{"slack", "all"}}, "on-deleted": {{"slack", "all"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cfg.SubscriptionsOf(tt.labels, tt.app, tt.proj)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for trigger, dests := range tt.want {
				if !sameDestinations(got[trigger], dests) {
					t.Errorf("%s: got %v, want %v", trigger, got[trigger], dests)
				}
			}
		})
	}
}

func sameDestinations(a, b []Destination) bool {
	if len(a) != len(b) {
		return false
	}
	for _, d := range a {
		found := false
		for _, e := range b {
			found = found || d == e
		}
		if !found {
			return false
		}
	}
	return true
}

func TestStateKeys(t *testing.T) {
	// The keys Argo CD writes, so a takeover does not notify again.
	r := Result{Key: conditionKey(0, "app.status.operationState.phase in ['Succeeded']")}
	d := Destination{Service: "slack", Recipient: "ops"}
	if got, want := stateKey("on-sync-succeeded", r, d), "on-sync-succeeded:[0].zxM90Et6k4Elb1-fHdjtDJq0xR0:slack:ops"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	r.OncePer = "abc123"
	if got := stateKey("on-deployed", r, d); !strings.HasPrefix(got, "abc123:on-deployed:[0].") {
		t.Errorf("a oncePer key %q", got)
	}
	s := State{}
	if !s.mark("on-deployed", r, d, true, timeAt(1)) || s.mark("on-deployed", r, d, true, timeAt(2)) {
		t.Error("marking twice changed the state twice")
	}
	if s.mark("on-deployed", r, d, false, timeAt(3)) || len(s) != 1 {
		t.Error("a oncePer entry was forgotten")
	}
	r.OncePer = ""
	s.mark("on-sync-succeeded", r, d, true, timeAt(4))
	if !s.mark("on-sync-succeeded", r, d, false, timeAt(5)) || len(s) != 1 {
		t.Errorf("a condition that stopped holding was not forgotten: %v", s)
	}
	for i := range 150 {
		s[string(rune('a'+i%26))+strings.Repeat("x", i)] = int64(i)
	}
	s.truncate()
	if len(s) != maxState {
		t.Errorf("%d entries after truncate", len(s))
	}
	if _, ok := s["a"]; ok {
		t.Error("the oldest entry was kept")
	}
	if got := ParseState("not json"); len(got) != 0 {
		t.Errorf("an unreadable annotation: %v", got)
	}
}

func timeAt(sec int64) time.Time { return time.Unix(sec, 0) }
