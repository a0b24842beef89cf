package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestArgoCDAppSetGenerate: Argo CD's CLI and Capstan's preview an
// ApplicationSet whose git generator reads a repository through the API
// server's repo server (`argocd appset generate`), and nothing is created.
func TestArgoCDAppSetGenerate(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, true)
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "apps", map[string]string{
		"apps/web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"apps/api/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\n",
	})
	spec := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: dirs
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: ` + remote.URL + `
      revision: main
      directories:
      - path: apps/*
  template:
    metadata:
      name: '{{.path.basename}}'
    spec:
      project: default
      source: {repoURL: ` + remote.URL + `, targetRevision: main, path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.path.basename}}'}
`
	file := filepath.Join(t.TempDir(), "appset.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	out := argocd.Expect(0, "appset", "generate", file, "-o", "json")
	var apps []v1alpha1.Application
	if err := json.Unmarshal([]byte(out), &apps); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var names []string
	for _, a := range apps {
		names = append(names, a.Name+"="+a.Spec.Source.Path+"@"+a.Spec.Destination.Namespace)
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "api=apps/api@api web=apps/web@web" {
		t.Errorf("generated %s\n%s", got, out)
	}
	f.login()
	if got := f.expect(0, "appset", "generate", file); got != "web\napi\n" && got != "api\nweb\n" {
		t.Errorf("capstan appset generate: %q", got)
	}
	if list := argocd.Expect(0, "appset", "list"); strings.Contains(list, "dirs") {
		t.Errorf("generate created the ApplicationSet:\n%s", list)
	}
}
