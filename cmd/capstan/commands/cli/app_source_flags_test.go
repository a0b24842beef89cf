package cli

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// applyFlags parses args as app create's spec flags and applies them to app.
func applyFlags(t *testing.T, app *v1alpha1.Application, args ...string) error {
	t.Helper()
	s := &specFlags{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s.add(fs)
	fs.IntVar(&s.sourcePosition, "source-position", -1, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return s.apply(fs, app)
}

func TestSourceFlags(t *testing.T) {
	app := &v1alpha1.Application{}
	err := applyFlags(t, app, "--repo", "https://example.com/r.git", "--path", "p", "--revision", ">=1.0", "--tag-prefix", "web/v",
		"--helm-skip-crds", "--helm-set-file", "cert=files/ca.pem", "--helm-namespace", "web", "--helm-api-versions", "v1", "--ignore-missing-value-files",
		"--nameprefix", "pre-", "--kustomize-common-label", "team=web", "--kustomize-replica", "api=3", "--kustomize-force-common-label",
		"--directory-exclude", "*.json", "--directory-disable-extension-filter", "--jsonnet-tla-code", "n=1+1", "--jsonnet-ext-var-str", "env=prod", "--jsonnet-libs", "vendor",
		"--config-management-plugin", "cmp", "--plugin-env", "FOO=bar", "--ref", "values", "--source-name", "main",
		"--sync-policy", "automated", "--allow-empty", "--sync-retry-limit", "4", "--revision-history-limit", "3")
	if err != nil {
		t.Fatal(err)
	}
	src, spec := app.Spec.Source, app.Spec
	switch {
	case !src.Helm.SkipCrds || src.Helm.FileParameters[0] != (v1alpha1.HelmFileParameter{Name: "cert", Path: "files/ca.pem"}) ||
		src.Helm.Namespace != "web" || src.Helm.APIVersions[0] != "v1" || !src.Helm.IgnoreMissingValueFiles:
		t.Errorf("helm: %+v", src.Helm)
	case src.Kustomize.NamePrefix != "pre-" || src.Kustomize.CommonLabels["team"] != "web" || src.Kustomize.Replicas[0].Count.IntValue() != 3 || !src.Kustomize.ForceCommonLabels:
		t.Errorf("kustomize: %+v", src.Kustomize)
	case src.Directory.Exclude != "*.json" || !src.Directory.DisableExtensionFilter || !src.Directory.Jsonnet.TLAs[0].Code || src.Directory.Jsonnet.ExtVars[0].Value != "prod" || src.Directory.Jsonnet.Libs[0] != "vendor":
		t.Errorf("directory: %+v", src.Directory)
	case src.Plugin.Name != "cmp" || src.Plugin.Env[0].Value != "bar" || src.Ref != "values" || src.Name != "main" || src.TagPrefix != "web/v":
		t.Errorf("source: %+v", src)
	case !spec.SyncPolicy.Automated.AllowEmpty || spec.SyncPolicy.Retry.Limit != 4 || *spec.RevisionHistoryLimit != 3:
		t.Errorf("spec: %+v %+v", spec.SyncPolicy, spec.RevisionHistoryLimit)
	}

	for _, bad := range [][]string{
		{"--kustomize-replica", "api=three"},
		{"--plugin-env", "novalue"},
		{"--allow-empty"},
		{"--sync-retry-limit", "-1"},
	} {
		if err := applyFlags(t, &v1alpha1.Application{}, bad...); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}

	multi := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Sources: v1alpha1.ApplicationSources{{RepoURL: "a"}, {RepoURL: "b"}}}}
	if err := applyFlags(t, multi, "--source-position", "2", "--revision", "v2"); err != nil || multi.Spec.Sources[1].TargetRevision != "v2" {
		t.Errorf("--source-position 2: %v %+v", err, multi.Spec.Sources)
	}
	if err := applyFlags(t, multi, "--revision", "v3"); err == nil {
		t.Error("a multi-source change without --source-position was accepted")
	}
}

// TestParameterFlag: -p NAME=VALUE sets a Helm parameter as --helm-set
// does, and only on a Helm source, as Argo CD's; --env is taken and does
// nothing, as in Argo CD.
func TestParameterFlag(t *testing.T) {
	app := &v1alpha1.Application{}
	if err := applyFlags(t, app, "--repo", "https://charts.example.com", "--helm-chart", "web", "-p", "image.tag=1.2", "--parameter", "url=a=b", "--env", "prod"); err != nil {
		t.Fatal(err)
	}
	got := app.Spec.Source.Helm.Parameters
	if len(got) != 2 || got[0] != (v1alpha1.HelmParameter{Name: "image.tag", Value: "1.2"}) || got[1] != (v1alpha1.HelmParameter{Name: "url", Value: "a=b"}) {
		t.Errorf("parameters: %+v", got)
	}
	kustomize := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{}}}}
	if err := applyFlags(t, kustomize, "-p", "a=b"); err == nil {
		t.Error("a parameter was set on a Kustomize source")
	}
}

func TestTokenClaims(t *testing.T) {
	enc := func(claims string) string {
		return "h." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".s"
	}
	now := time.Unix(2000, 0)
	for _, tc := range []struct {
		token, user  string
		local, ended bool
	}{
		{enc(`{"sub":"admin:login","iss":"argocd","exp":3000}`), "admin", true, false},
		{enc(`{"sub":"Cgd1c2Vy","iss":"https://dex.example.com","federated_claims":{"user_id":"jane"},"exp":1000}`), "jane", false, true},
		{enc(`{"sub":"ci"}`), "ci", true, false},
	} {
		c, err := readClaims(tc.token)
		if err != nil || c.username() != tc.user || c.local() != tc.local || c.expired(now) != tc.ended {
			t.Errorf("%s: %+v %v", tc.token, c, err)
		}
	}
	if _, err := readClaims("not-a-jwt"); err == nil {
		t.Error("a token that is no JWT was read")
	}
}
