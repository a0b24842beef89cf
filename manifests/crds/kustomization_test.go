package crds_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKustomizationListsEveryCRD: kustomization.yaml (what kubectl apply -k
// manifests/crds, make run and the install overlays take) lists exactly the
// CRD files make generate writes.
func TestKustomizationListsEveryCRD(t *testing.T) {
	data, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*argoproj.io_*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(k.Resources)
	slices.Sort(files)
	if !slices.Equal(k.Resources, files) {
		t.Errorf("kustomization.yaml lists %v, the generated CRDs are %v", k.Resources, files)
	}
}
