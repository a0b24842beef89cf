package settings

import (
	"maps"
	"testing"
	"time"
)

func TestEventLabels(t *testing.T) {
	app := map[string]string{"team": "payments", "env": "prod", "secret-ish": "x", "tier": "web"}
	proj := map[string]string{"team": "platform", "cost-center": "42"}
	for _, tt := range []struct {
		name, include, exclude string
		want                   map[string]string
	}{
		{name: "none asked", want: nil},
		{name: "one key", include: "env", want: map[string]string{"env": "prod"}},
		{name: "all but excluded", include: "*", exclude: "secret-*, tier",
			want: map[string]string{"team": "payments", "env": "prod", "cost-center": "42"}},
		{name: "the app's label wins over its project's", include: "team", want: map[string]string{"team": "payments"}},
		{name: "project only", include: "cost-*", want: map[string]string{"cost-center": "42"}},
		{name: "excluded everything", include: "*", exclude: "*", want: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &ArgoCD{Data: map[string]string{}}
			if tt.include != "" {
				a.Data["resource.includeEventLabelKeys"] = tt.include
			}
			if tt.exclude != "" {
				a.Data["resource.excludeEventLabelKeys"] = tt.exclude
			}
			if got := a.EventLabels(app, proj); !maps.Equal(got, tt.want) {
				t.Errorf("EventLabels = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAllowedNodeLabelsAndCustomLabels(t *testing.T) {
	a := &ArgoCD{Data: map[string]string{
		"application.allowedNodeLabels": "topology.kubernetes.io/zone, bad key!,kubernetes.io/arch",
		"resource.customLabels":         "team,env",
	}}
	if got := a.AllowedNodeLabels(); len(got) != 2 || got[0] != "topology.kubernetes.io/zone" || got[1] != "kubernetes.io/arch" {
		t.Errorf("AllowedNodeLabels = %q", got)
	}
	if got := a.CustomLabels(); len(got) != 2 || got[1] != "env" {
		t.Errorf("CustomLabels = %q", got)
	}
}

func TestWebhookRefreshJitter(t *testing.T) {
	for _, tt := range []struct {
		jitter, threshold string
		want              RefreshJitter
		err               bool
	}{
		{want: RefreshJitter{Threshold: 10}},
		{jitter: "1m", threshold: "2", want: RefreshJitter{Max: time.Minute, Threshold: 2}},
		{jitter: "soon", threshold: "-1", want: RefreshJitter{Threshold: 10}, err: true},
	} {
		a := &ArgoCD{Data: map[string]string{"webhook.refresh.jitter": tt.jitter, "webhook.refresh.jitter.threshold": tt.threshold}}
		got, err := a.WebhookRefreshJitter()
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("%q/%q: %+v, %v; want %+v", tt.jitter, tt.threshold, got, err, tt.want)
		}
	}
	j := RefreshJitter{Max: time.Second, Threshold: 2}
	if j.Delay(1) != 0 || j.Delay(2) != 0 {
		t.Error("refreshes within the threshold wait")
	}
	for n := 3; n < 100; n++ {
		if d := j.Delay(n); d < 0 || d >= time.Second {
			t.Fatalf("Delay(%d) = %s, want within [0, 1s)", n, d)
		}
	}
	if (RefreshJitter{Threshold: 0}).Delay(50) != 0 {
		t.Error("no jitter configured, yet a wait")
	}
}

func TestDisabledTools(t *testing.T) {
	a := &ArgoCD{Data: map[string]string{"helm.enable": "true", "kustomize.enable": "false", "jsonnet.enable": "no"}}
	if got := a.DisabledTools(); len(got) != 2 || got[0] != "kustomize" || got[1] != "jsonnet" {
		t.Errorf("DisabledTools = %v, want kustomize and jsonnet", got)
	}
	if got := (&ArgoCD{}).DisabledTools(); got != nil {
		t.Errorf("unset keys turned %v off", got)
	}
}
