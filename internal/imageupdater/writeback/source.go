package writeback

import (
	"slices"
	"strings"

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

// SourceOf is the source of a multi-source Application that carries an
// image: the one whose overrides already name it (its Kustomize image,
// Helm parameter or plugin variable), else MainSource. A single-source
// Application's is its source.
func SourceOf(app *v1alpha1.Application, wb config.WriteBack, img config.Image) (*v1alpha1.ApplicationSource, v1alpha1.ApplicationSourceType) {
	sources, found := app.Spec.Sources, app.Status.SourceTypes
	if app.Spec.Source == nil {
		for i := range sources {
			if names(&sources[i], img) {
				typ := declaredType(&sources[i])
				if len(found) == len(sources) && found[i] != "" {
					typ = found[i]
				}
				return &sources[i], typ
			}
		}
	}
	return MainSource(app, wb)
}

// names reports whether a source's overrides name the image.
func names(src *v1alpha1.ApplicationSource, img config.Image) bool {
	if k := src.Kustomize; k != nil {
		for _, entry := range k.Images {
			name, _, _ := strings.Cut(string(entry), "=")
			if n, _, _ := SplitRef(name); n == img.Name || (img.KustomizeImageName != "" && n == img.KustomizeImageName) {
				return true
			}
		}
	}
	if h := src.Helm; h != nil && (img.HelmImageSpec != "" || img.HelmImageName != "" || img.HelmImageTag != "") {
		param, _ := HelmTagParameter(img)
		for _, p := range h.Parameters {
			if p.Name == param {
				return true
			}
		}
	}
	if p := src.Plugin; p != nil && img.HasPluginTarget() {
		for _, e := range p.Env {
			if e != nil && (e.Name == img.PluginSpec || e.Name == img.PluginTag) && e.Name != "" {
				return true
			}
		}
	}
	return false
}

// BySource groups an Application's changes by the source carrying each
// image (see SourceOf), in the order of the sources.
func BySource(app *v1alpha1.Application, wb config.WriteBack, changes []Change) []SourceChanges {
	var out []SourceChanges
	for _, c := range changes {
		src, typ := SourceOf(app, wb, c.Image)
		i := slices.IndexFunc(out, func(g SourceChanges) bool { return g.Source == src })
		if i < 0 {
			out = append(out, SourceChanges{Source: src, Type: typ})
			i = len(out) - 1
		}
		out[i].Changes = append(out[i].Changes, c)
	}
	return out
}

// SourceChanges are the changes one source carries.
type SourceChanges struct {
	Source  *v1alpha1.ApplicationSource
	Type    v1alpha1.ApplicationSourceType
	Changes []Change
}

// Only returns a copy of app whose single source is src: what a Git
// write-back of that source's changes works on.
func Only(app *v1alpha1.Application, src *v1alpha1.ApplicationSource, typ v1alpha1.ApplicationSourceType) *v1alpha1.Application {
	out := *app
	out.Spec.Source, out.Spec.Sources = src, nil
	out.Status.SourceType, out.Status.SourceTypes = typ, nil
	return &out
}
