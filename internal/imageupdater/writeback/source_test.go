package writeback

import (
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

func TestMainSource(t *testing.T) {
	helm := v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.2.0"}
	values := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/values.git", Ref: "values"}
	kust := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "overlays/prod", Kustomize: &v1alpha1.ApplicationSourceKustomize{}}
	plain := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "base"}
	app := func(sources []v1alpha1.ApplicationSource, found ...v1alpha1.ApplicationSourceType) *v1alpha1.Application {
		a := &v1alpha1.Application{}
		a.Spec.Sources, a.Status.SourceTypes = sources, found
		return a
	}
	for _, tc := range []struct {
		name     string
		app      *v1alpha1.Application
		wb       config.WriteBack
		want     string
		wantType v1alpha1.ApplicationSourceType
	}{
		{"one source", &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &kust}}, config.WriteBack{}, kust.Path, v1alpha1.SourceTypeKustomize},
		{"a chart and its values", app([]v1alpha1.ApplicationSource{values, helm}), config.WriteBack{}, helm.Chart, v1alpha1.SourceTypeHelm},
		{"the kustomization target picks the Kustomize source", app([]v1alpha1.ApplicationSource{helm, kust}), config.WriteBack{Target: config.TargetKustomization}, kust.Path, v1alpha1.SourceTypeKustomize},
		{"a Kustomize source the controller found", app([]v1alpha1.ApplicationSource{values, plain}, v1alpha1.SourceTypeDirectory, v1alpha1.SourceTypeKustomize), config.WriteBack{}, plain.Path, v1alpha1.SourceTypeKustomize},
		{"plain directories: the first", app([]v1alpha1.ApplicationSource{plain, values}), config.WriteBack{}, plain.Path, v1alpha1.SourceTypeDirectory},
	} {
		src, typ := MainSource(tc.app, tc.wb)
		if src == nil || (src.Path != tc.want && src.Chart != tc.want) || typ != tc.wantType {
			t.Errorf("%s: %+v %s, want %s (%s)", tc.name, src, typ, tc.want, tc.wantType)
		}
	}
	if src, _ := MainSource(&v1alpha1.Application{}, config.WriteBack{}); src != nil {
		t.Errorf("no source: %+v", src)
	}
}
