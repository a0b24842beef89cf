package writeback

import (
	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

// MainSource is the source of an Application that write-back changes,
// with how it renders. A single-source Application has one. Of a
// multi-source Application's sources, as Argo CD Image Updater picks: the
// first of the type the write-back target implies (kustomization: a
// Kustomize source, helmvalues: a Helm source) or, without one, of the
// first Helm, Kustomize or plugin type the controller found among the
// sources; then a source the controller found of that type; then any
// Helm, Kustomize or plugin source; then the first. Nil when the
// Application has no source.
func MainSource(app *v1alpha1.Application, wb config.WriteBack) (*v1alpha1.ApplicationSource, v1alpha1.ApplicationSourceType) {
	if app.Spec.Source != nil || len(app.Spec.Sources) == 0 {
		return app.Spec.Source, SourceType(app)
	}
	sources, found := app.Spec.Sources, app.Status.SourceTypes
	aligned := len(found) == len(sources)
	typeOf := func(i int) v1alpha1.ApplicationSourceType {
		if aligned && found[i] != "" {
			return found[i]
		}
		return declaredType(&sources[i])
	}
	want := wantedType(wb, found)
	for i := range sources {
		if want != v1alpha1.SourceTypeDirectory && declaredType(&sources[i]) == want {
			return &sources[i], typeOf(i)
		}
	}
	if aligned && want != v1alpha1.SourceTypeDirectory {
		for i := range sources {
			if found[i] == want {
				return &sources[i], want
			}
		}
	}
	for i := range sources {
		if t := declaredType(&sources[i]); t != v1alpha1.SourceTypeDirectory {
			return &sources[i], typeOf(i)
		}
	}
	return &sources[0], typeOf(0)
}

// wantedType is the source type a multi-source write-back looks for.
func wantedType(wb config.WriteBack, found []v1alpha1.ApplicationSourceType) v1alpha1.ApplicationSourceType {
	switch wb.Target {
	case config.TargetKustomization:
		return v1alpha1.SourceTypeKustomize
	case config.TargetHelmValues:
		return v1alpha1.SourceTypeHelm
	}
	for _, t := range found {
		if t == v1alpha1.SourceTypeHelm || t == v1alpha1.SourceTypeKustomize || t == v1alpha1.SourceTypePlugin {
			return t
		}
	}
	return v1alpha1.SourceTypeDirectory
}

// declaredType is how a source's own settings say it renders.
func declaredType(src *v1alpha1.ApplicationSource) v1alpha1.ApplicationSourceType {
	switch {
	case src.Helm != nil || src.Chart != "":
		return v1alpha1.SourceTypeHelm
	case src.Kustomize != nil:
		return v1alpha1.SourceTypeKustomize
	case src.Plugin != nil:
		return v1alpha1.SourceTypePlugin
	}
	return v1alpha1.SourceTypeDirectory
}
