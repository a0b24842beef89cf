package repo

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestDisabledTools: a tool argocd-cm turns off (kustomize.enable,
// jsonnet.enable "false") is not run: the source renders as a plain
// directory, its Jsonnet files left out, as in Argo CD.
func TestDisabledTools(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "tools", map[string]string{
		"k/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: k}\nresources: [cm.yaml]\nnamePrefix: p-\n",
		"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
		"j/plain.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
		"j/gen.jsonnet":        "{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'generated'}}\n",
		"h/Chart.yaml":         "apiVersion: v2\nname: h\nversion: 0.1.0\n",
		"h/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-templated'}\n",
		"h/plain.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beside-the-chart}\n",
	})
	svc := NewService(Options{Root: t.TempDir()})
	for _, tt := range []struct {
		path string
		off  []string
		want string
	}{
		{"k", nil, "ConfigMap/p-cm"},
		{"k", []string{ToolKustomize}, "ConfigMap/cm Kustomization/k"},
		{"j", nil, "ConfigMap/generated ConfigMap/plain"},
		{"j", []string{ToolJsonnet}, "ConfigMap/plain"},
		{"k", []string{ToolHelm, ToolJsonnet}, "ConfigMap/p-cm"},
		{"h", nil, "ConfigMap/tools-templated"},
		{"h", []string{ToolHelm}, "ConfigMap/beside-the-chart"},
	} {
		resp, err := svc.Render(context.Background(), &Request{AppName: "tools", DisabledTools: tt.off,
			Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: tt.path}}})
		if err != nil {
			t.Fatalf("%s without %v: %v", tt.path, tt.off, err)
		}
		got := names(resp.Objects)
		sort.Strings(got)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s without %v: %v, want %s", tt.path, tt.off, got, tt.want)
		}
	}
}
