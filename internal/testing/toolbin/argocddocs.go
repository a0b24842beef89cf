package toolbin

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// commentedKey is a key the documented ConfigMap shows commented out,
// under data ("  # resource.manifest.storage: \"json\""): a dotted name, to
// tell it from prose.
var commentedKey = regexp.MustCompile(`(?m)^  #\s*([A-Za-z][\w-]*(?:\.[\w-]+)+):[ \t]*(.*)$`)

// ArgoCDDocumentedConfigMap is the data of one of the ConfigMaps Argo
// CD's documentation shows with every key set (argocd-cm.yaml,
// argocd-cmd-params-cm.yaml), as `make argocd-manifests` copies them,
// with the keys it shows commented out too, at their example values.
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
	for _, m := range commentedKey.FindAllStringSubmatch(string(data), -1) {
		if _, ok := cm.Data[m[1]]; !ok {
			cm.Data[m[1]] = strings.Trim(strings.TrimSpace(m[2]), `"'`)
		}
	}
	if len(cm.Data) < 50 {
		t.Fatalf("%s has only %d keys: is bin/argocd-manifests complete?", file, len(cm.Data))
	}
	return cm.Data
}
