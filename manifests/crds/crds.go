// Package crds embeds the CustomResourceDefinitions generated from api/
// by `make generate` (Argo CD's argoproj.io kinds and Argo CD Image
// Updater's ImageUpdater), so installers and tests use exactly the
// committed files.
package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *argoproj.io_*.yaml
var files embed.FS

// All returns the CRDs in file-name order.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*argoproj.io_*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", name, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
