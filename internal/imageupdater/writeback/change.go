// Package writeback records new image versions where Argo CD Image
// Updater records them: in the Application's spec (write-back method
// argocd: Kustomize images or Helm parameters), or in Git (method git:
// a .argocd-source-<app>.yaml override file, the kustomization or Helm
// values file edited in place, or, for plain-directory sources, the
// manifests' image fields). In-place edits change only the values they
// set, so comments and formatting survive.
package writeback

import (
	"cmp"
	"slices"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

// Change is one image of an Application moving to a new version.
type Change struct {
	// Image holds the image's annotation settings.
	Image config.Image
	// Name is the image's name (registry/repository) without tag.
	Name string
	// OldTag is the tag deployed now ("" if unknown); NewTag the one to
	// deploy.
	OldTag, NewTag string
	// Digest pins the image to a manifest digest (the digest strategy).
	Digest string
}

// Ref is the image reference to deploy: name:tag, or name@digest.
func (c Change) Ref() string {
	if c.Digest != "" {
		return c.Name + "@" + c.Digest
	}
	return c.Name + ":" + c.NewTag
}

// tagValue is what goes in a Helm tag parameter: the tag, with the
// digest appended when pinned.
func (c Change) tagValue() string {
	if c.Digest != "" {
		return c.NewTag + "@" + c.Digest
	}
	return c.NewTag
}

// SplitRef splits an image reference into name, tag and digest, telling
// a registry port (host:5000/repo) from a tag.
func SplitRef(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	slash := strings.LastIndex(name, "/")
	if i := strings.LastIndex(name, ":"); i > slash {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// SetKustomizeImage sets the override for c's image in a Kustomize
// images list, replacing an override of the same image.
func SetKustomizeImage(images v1alpha1.KustomizeImages, c Change) v1alpha1.KustomizeImages {
	key := c.Name
	entry := c.Ref()
	if k := c.Image.KustomizeImageName; k != "" && k != c.Name {
		key, entry = k, k+"="+c.Ref()
	}
	out := make(v1alpha1.KustomizeImages, 0, len(images)+1)
	replaced := false
	for _, img := range images {
		name, _, _ := strings.Cut(string(img), "=")
		if n, _, _ := SplitRef(name); n == key {
			if !replaced {
				out = append(out, v1alpha1.KustomizeImage(entry))
				replaced = true
			}
			continue
		}
		out = append(out, img)
	}
	if !replaced {
		out = append(out, v1alpha1.KustomizeImage(entry))
	}
	return out
}

// HelmTagParameter names the Helm parameter holding an image's version:
// helm.image-spec (name:tag, spec true) or helm.image-tag (image.tag by
// default).
func HelmTagParameter(img config.Image) (name string, spec bool) {
	if img.HelmImageSpec != "" {
		return img.HelmImageSpec, true
	}
	return cmp.Or(img.HelmImageTag, "image.tag"), false
}

// HelmValues returns the Helm values (dotted path → value) that deploy c:
// helm.image-spec as name:tag, or helm.image-name and helm.image-tag
// (image.name and image.tag by default).
func HelmValues(c Change) [][2]string {
	tag, spec := HelmTagParameter(c.Image)
	if spec {
		return [][2]string{{tag, c.Ref()}}
	}
	return [][2]string{{cmp.Or(c.Image.HelmImageName, "image.name"), c.Name}, {tag, c.tagValue()}}
}

// SetHelmParameters sets c's values as string parameters, replacing
// parameters of the same names.
func SetHelmParameters(params []v1alpha1.HelmParameter, c Change) []v1alpha1.HelmParameter {
	out := append([]v1alpha1.HelmParameter(nil), params...)
	for _, kv := range HelmValues(c) {
		p := v1alpha1.HelmParameter{Name: kv[0], Value: kv[1], ForceString: true}
		found := false
		for i := range out {
			if out[i].Name == p.Name {
				out[i], found = p, true
			}
		}
		if !found {
			out = append(out, p)
		}
	}
	return out
}

// PluginValues returns the plugin environment variables (name → value)
// that deploy c: plugin spec as name:tag, or the name and tag variables
// the image's target names.
func PluginValues(c Change) [][2]string {
	img := c.Image
	if img.PluginSpec != "" {
		return [][2]string{{img.PluginSpec, c.Ref()}}
	}
	var out [][2]string
	if img.PluginName != "" {
		out = append(out, [2]string{img.PluginName, c.Name})
	}
	if img.PluginTag != "" {
		out = append(out, [2]string{img.PluginTag, c.tagValue()})
	}
	return out
}

// SetPluginEnv sets c's plugin variables, replacing variables of the
// same names.
func SetPluginEnv(env v1alpha1.Env, c Change) v1alpha1.Env {
	out := make(v1alpha1.Env, 0, len(env)+2)
	for _, e := range env {
		if e != nil {
			out = append(out, &v1alpha1.EnvEntry{Name: e.Name, Value: e.Value})
		}
	}
	for _, kv := range PluginValues(c) {
		i := slices.IndexFunc(out, func(e *v1alpha1.EnvEntry) bool { return e.Name == kv[0] })
		if i < 0 {
			out = append(out, &v1alpha1.EnvEntry{Name: kv[0], Value: kv[1]})
		} else {
			out[i].Value = kv[1]
		}
	}
	return out
}

// SetOverrides records changes in a source of the given type: Kustomize
// images, Helm parameters or plugin environment variables. It reports
// false for other source types.
func SetOverrides(src *v1alpha1.ApplicationSource, typ v1alpha1.ApplicationSourceType, changes []Change) bool {
	switch typ {
	case v1alpha1.SourceTypeKustomize:
		if src.Kustomize == nil {
			src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
		}
		for _, c := range changes {
			src.Kustomize.Images = SetKustomizeImage(src.Kustomize.Images, c)
		}
	case v1alpha1.SourceTypeHelm:
		if src.Helm == nil {
			src.Helm = &v1alpha1.ApplicationSourceHelm{}
		}
		for _, c := range changes {
			src.Helm.Parameters = SetHelmParameters(src.Helm.Parameters, c)
		}
	case v1alpha1.SourceTypePlugin:
		if src.Plugin == nil {
			src.Plugin = &v1alpha1.ApplicationSourcePlugin{}
		}
		for _, c := range changes {
			src.Plugin.Env = SetPluginEnv(src.Plugin.Env, c)
		}
	default:
		return false
	}
	return true
}

// SourceType is how an Application's source renders: what the controller
// last found, else what the source's own settings say.
func SourceType(app *v1alpha1.Application) v1alpha1.ApplicationSourceType {
	if app.Status.SourceType != "" {
		return app.Status.SourceType
	}
	if app.Spec.Source == nil {
		return ""
	}
	return declaredType(app.Spec.Source)
}
