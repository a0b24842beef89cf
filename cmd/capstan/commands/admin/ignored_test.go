package admin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIgnoredFields: resource-overrides ignore-differences and
// ignore-resource-updates print what argocd-cm's rules of that kind leave
// out of a local object, from a local argocd-cm, as Argo CD's do.
func TestIgnoredFields(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cm := write("argocd-cm.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm}
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/replicas]
  resource.customizations.ignoreResourceUpdates.apps_Deployment: |
    jqPathExpressions: ['.metadata.annotations["deployment.kubernetes.io/revision"]']
`)
	deploy := write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, annotations: {deployment.kubernetes.io/revision: '3'}}\nspec: {replicas: 2, paused: false}\n")
	service := write("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: ClusterIP}\n")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"ignore-differences", deploy}, []string{"Following fields are ignored:", "-  replicas: 2"}},
		{[]string{"ignore-differences", service}, []string{"Ignore differences are not configured for '/Service'"}},
		{[]string{"ignore-resource-updates", deploy}, []string{"Following fields are ignored:", "deployment.kubernetes.io/revision"}},
		{[]string{"ignore-resource-updates", service}, []string{"No fields are ignored by ignoreResourceUpdates settings"}},
	} {
		cmd := newAdminSettingsCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(append([]string{"resource-overrides", "--argocd-cm-path", cm}, tc.args...))
		if err := cmd.Execute(); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, out.String())
			}
		}
	}

	// --ignore-normalizer-jq-execution-timeout bounds each expression.
	endless := write("endless-cm.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm}
data:
  resource.customizations.ignoreResourceUpdates.apps_Deployment: |
    jqPathExpressions: ['def f: f; f']
`)
	cmd := newAdminSettingsCommand()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetArgs([]string{"resource-overrides", "--argocd-cm-path", endless, "ignore-resource-updates", deploy, "--ignore-normalizer-jq-execution-timeout", "30ms"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "within 30ms") {
		t.Errorf("an endless expression within 30ms: %v", err)
	}
}
