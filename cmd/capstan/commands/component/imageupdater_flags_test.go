package component

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/imageupdater/webhook"
)

// TestWebhookSecretsAsImageUpdaterNamesThem: each webhook type's secret
// comes from Argo CD Image Updater's variable or flag, and secrets are
// required unless WEBHOOK_REQUIRE_SECRET says otherwise.
func TestWebhookSecretsAsImageUpdaterNamesThem(t *testing.T) {
	parse := func(args ...string) *imageUpdaterFlags {
		f := &imageUpdaterFlags{}
		cmd := &cobra.Command{Use: "run", RunE: func(*cobra.Command, []string) error { return nil }}
		f.add(cmd, "", true)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Setenv("QUAY_WEBHOOK_SECRET", "q")
	t.Setenv("ALIYUN_ACR_WEBHOOK_SECRET", "a")
	t.Setenv("CLOUDEVENTS_WEBHOOK_SECRET", "c")
	f := parse("--ghcr-webhook-secret", "g")
	want := map[webhook.Kind]string{webhook.Quay: "q", webhook.AliyunACR: "a", webhook.CloudEvents: "c", webhook.GitHub: "g"}
	if got := f.secrets(); !maps.Equal(got, want) || !f.requireSecret {
		t.Errorf("secrets %v, require %v; want %v and required", got, f.requireSecret, want)
	}
	t.Setenv("WEBHOOK_REQUIRE_SECRET", "false")
	if parse().requireSecret {
		t.Error("WEBHOOK_REQUIRE_SECRET=false still requires secrets")
	}
	if len(webhookSecretNames) != len(webhook.Kinds)-1 {
		t.Errorf("%d webhook types have a secret of their own, want every type but distribution's", len(webhookSecretNames))
	}
}

// TestIntervalFromImageUpdaterVariables: IMAGE_UPDATER_INTERVAL and
// MAX_CONCURRENT_APPS, which the install sets from the ConfigMap's
// interval and max_concurrent_apps, are the flags' defaults; the command
// line wins, and a bad value stops the command naming the variable.
func TestIntervalFromImageUpdaterVariables(t *testing.T) {
	run := func(args ...string) (*imageUpdaterFlags, error) {
		f := &imageUpdaterFlags{}
		cmd := &cobra.Command{Use: "run", RunE: func(*cobra.Command, []string) error { return f.envErr }}
		f.add(cmd, "", true)
		cmd.SetArgs(args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		return f, cmd.Execute()
	}
	t.Setenv("IMAGE_UPDATER_INTERVAL", "30s")
	t.Setenv("MAX_CONCURRENT_APPS", "4")
	if f, err := run(); err != nil || f.interval != 30*time.Second || f.maxConcurrency != 4 {
		t.Errorf("from the variables: %v %d %v", f.interval, f.maxConcurrency, err)
	}
	if f, err := run("--interval", "5m"); err != nil || f.interval != 5*time.Minute {
		t.Errorf("the command line wins: %v %v", f.interval, err)
	}
	t.Setenv("IMAGE_UPDATER_INTERVAL", "soon")
	if _, err := run(); err == nil || !strings.Contains(err.Error(), "IMAGE_UPDATER_INTERVAL") {
		t.Errorf("a bad interval: %v, want an error naming the variable", err)
	}
}
