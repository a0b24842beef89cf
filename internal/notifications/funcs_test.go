package notifications

import (
	"context"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestTemplateFunctions: the functions Argo CD documents for templates —
// time's layouts, sync.GetInfoItem over the sync operation's info, and
// repo.GetAppDetails answered by a real repo server reading a Helm chart
// from Git, the Application's own parameter winning over the chart's.
func TestTemplateFunctions(t *testing.T) {
	git := gitserver.NewLocalRepo(t)
	git.Commit(t, "a chart", map[string]string{
		"chart/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"chart/values.yaml": "image:\n  tag: \"1.0\"\nreplicas: 2\n",
	})
	tmpl := `message: |
  {{ (call .time.Parse "2026-11-25T10:00:05Z").Format .time.Kitchen }} {{ .time.RFC1123Z }}
  {{ call .sync.GetInfoItem .app "reason" }}|{{ call .sync.GetInfoItem .app "missing" }}
  {{ with call .repo.GetAppDetails }}{{ .Type }} {{ .Helm.GetParameterValueByName "image.tag" }} {{ .Helm.GetParameterValueByName "replicas" }}{{ end }}
`
	cfg, err := Parse(&settings.Notifications{Data: map[string]string{"template.t": tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	app := map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"project": "default", "source": map[string]any{"repoURL": git.URL, "path": "chart", "targetRevision": "HEAD",
			"helm": map[string]any{"parameters": []any{map[string]any{"name": "image.tag", "value": "2.0"}}}}},
		"status": map[string]any{"operationState": map[string]any{"operation": map[string]any{
			"info": []any{map[string]any{"name": "reason", "value": "hotfix"}}}}},
	}
	rs := repo.NewService(repo.Options{Root: t.TempDir(), RefsTTL: time.Second})
	n, err := cfg.Format([]string{"t"}, cfg.vars(context.Background(), app, Destination{}, rs))
	if err != nil {
		t.Fatal(err)
	}
	want := "10:00AM Mon, 02 Jan 2006 15:04:05 -0700\nhotfix|\nHelm 2.0 2\n"
	if n.Message != want {
		t.Errorf("message %q, want %q", n.Message, want)
	}
}
