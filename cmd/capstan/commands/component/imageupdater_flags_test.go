package component

import (
	"maps"
	"testing"

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
