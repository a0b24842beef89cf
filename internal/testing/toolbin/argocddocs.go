package toolbin

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// ArgoCDDocumentedConfigMap is the data of one of the ConfigMaps Argo
// CD's documentation shows with every key set (argocd-cm.yaml,
// argocd-cmd-params-cm.yaml), as `make argocd-manifests` copies them.
func ArgoCDDocumentedConfigMap(t testing.TB, file string) map[string]string {
	t.Helper()
	dir := Find(t, "CAPSTAN_ARGOCD_MANIFESTS", filepath.Join("bin", "argocd-manifests"), "argocd-manifests")
	data, err := os.ReadFile(filepath.Join(dir, "docs", file))
	if err != nil {
		t.Fatalf("%v (run `make argocd-manifests`)", err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(cm.Data) < 50 {
		t.Fatalf("%s has only %d keys: is bin/argocd-manifests complete?", file, len(cm.Data))
	}
	return cm.Data
}
