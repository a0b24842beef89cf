package config

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	iuv1 "github.com/capstan-cd/capstan/api/imageupdater/v1alpha1"
	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Validate checks what makes a whole ImageUpdater unusable: a name
// pattern that is not a glob, a label selector that does not parse, or a
// spec.namespace other than its own. Such an ImageUpdater selects nothing.
func Validate(iu *iuv1.ImageUpdater) error {
	var errs []error
	if ns := iu.Spec.Namespace; ns != "" && ns != iu.Namespace {
		errs = append(errs, fmt.Errorf("spec.namespace: %q: an ImageUpdater manages the Applications of its own namespace %s only", ns, iu.Namespace))
	}
	if len(iu.Spec.ApplicationRefs) == 0 {
		errs = append(errs, errors.New("spec.applicationRefs: no application references"))
	}
	for _, ref := range iu.Spec.ApplicationRefs {
		at := refPath(ref)
		if _, err := path.Match(ref.NamePattern, ""); err != nil {
			errs = append(errs, fmt.Errorf("%s.namePattern: %q is not a valid glob: %w", at, ref.NamePattern, err))
		}
		if _, err := metav1.LabelSelectorAsSelector(ref.LabelSelectors); err != nil {
			errs = append(errs, fmt.Errorf("%s.labelSelectors: %w", at, err))
		}
	}
	return errors.Join(errs...)
}

// ForApplication returns the settings an ImageUpdater gives an
// Application, from the most specific of its references that selects it
// (see Specificity): nil when none does, or when the reference reads the
// annotations and the Application has no image-list. Errors name the
// ImageUpdater's field (or the annotation) at fault; as with Parse, an
// image whose settings are malformed is left out and the others kept.
// Call Validate first: a reference that does not validate selects nothing.
func ForApplication(iu *iuv1.ImageUpdater, app *v1alpha1.Application) (*App, []error) {
	ref := SelectingRef(iu, app)
	if ref == nil {
		return nil, nil
	}
	if ref.UseAnnotations != nil && *ref.UseAnnotations {
		conf, errs := Parse(app.Annotations)
		if conf != nil {
			v, err := verification(iu, refPath(*ref)+".imagesVerification", ref.ImagesVerification)
			for i := range conf.Images {
				conf.Images[i].Verify = v
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		return conf, errs
	}
	return fromRef(iu, *ref)
}

// SelectingRef is the most specific reference of iu whose name pattern
// and label selector match app, or nil.
func SelectingRef(iu *iuv1.ImageUpdater, app *v1alpha1.Application) *iuv1.ApplicationRef {
	refs := slices.Clone(iu.Spec.ApplicationRefs)
	slices.SortStableFunc(refs, func(a, b iuv1.ApplicationRef) int { return cmp.Compare(Specificity(b), Specificity(a)) })
	for i := range refs {
		if ok, _ := path.Match(refs[i].NamePattern, app.Name); !ok {
			continue
		}
		if sel := refs[i].LabelSelectors; sel != nil { // (a nil selector would select nothing)
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil || !s.Matches(labels.Set(app.Labels)) {
				continue
			}
		}
		return &refs[i]
	}
	return nil
}

// charClass is a glob's [...] set, which counts as no literal character.
var charClass = regexp.MustCompile(`\[[^]]*]`)

// Specificity ranks references as Argo CD Image Updater does when several
// select one Application: an exact name outranks any pattern, a label
// selector outranks none, each selector term adds, and so does each
// literal character of the pattern.
func Specificity(ref iuv1.ApplicationRef) int {
	score := 0
	if !strings.ContainsAny(ref.NamePattern, "*?[]") {
		score += 1_000_000
	}
	literal := strings.NewReplacer("*", "", "?", "").Replace(charClass.ReplaceAllString(ref.NamePattern, ""))
	score += len(literal)
	if sel := ref.LabelSelectors; sel != nil {
		score += 10_000 + 100*(len(sel.MatchLabels)+len(sel.MatchExpressions))
	}
	return score
}

func refPath(ref iuv1.ApplicationRef) string {
	return fmt.Sprintf("spec.applicationRefs[%s]", ref.NamePattern)
}

// keyed are settings by annotation key, with the ImageUpdater field each
// came from, so one parser reads both and errors name the field.
type keyed struct {
	values, fields map[string]string
}

func (k keyed) set(key, field, value string) {
	k.values[key], k.fields[key] = value, field
}

func (k keyed) get(key string) (string, bool) {
	v, ok := k.values[key]
	return strings.TrimSpace(v), ok
}

// common records a level's update settings under prefix ("" for the
// Application-wide keys, "alias." for one image's).
func (k keyed) common(prefix, at string, c *iuv1.CommonUpdateSettings) {
	if c == nil {
		return
	}
	at += ".commonUpdateSettings."
	if c.UpdateStrategy != nil {
		k.set(prefix+"update-strategy", at+"updateStrategy", *c.UpdateStrategy)
	}
	if c.ForceUpdate != nil {
		k.set(prefix+"force-update", at+"forceUpdate", strconv.FormatBool(*c.ForceUpdate))
	}
	if c.AllowTags != nil {
		k.set(prefix+"allow-tags", at+"allowTags", *c.AllowTags)
	}
	if c.IgnoreTags != nil {
		k.set(prefix+"ignore-tags", at+"ignoreTags", strings.Join(c.IgnoreTags, ","))
	}
	if c.PullSecret != nil {
		k.set(prefix+"pull-secret", at+"pullSecret", *c.PullSecret)
	}
	if c.Platforms != nil {
		k.set(prefix+"platforms", at+"platforms", strings.Join(c.Platforms, ","))
	}
}

// writeBack records a level's write-back settings; a later level's field
// overrides an earlier one's, and its pull request replaces the earlier
// one whole (the providers exclude each other).
func (k keyed) writeBack(at string, wb *iuv1.WriteBackConfig, iuNamespace string) (*iuv1.PullRequest, string, error) {
	if wb == nil {
		return nil, "", nil
	}
	at += ".writeBackConfig"
	if wb.Method != nil {
		method, err := qualifySecret(*wb.Method, iuNamespace)
		if err != nil {
			return nil, "", &Error{Annotation: "write-back-method", Field: at + ".method", Err: err}
		}
		k.set("write-back-method", at+".method", method)
	}
	g := wb.GitConfig
	if g == nil {
		return nil, "", nil
	}
	at += ".gitConfig"
	if g.Repository != nil {
		k.set("git-repository", at+".repository", *g.Repository)
	}
	if g.Branch != nil {
		k.set("git-branch", at+".branch", *g.Branch)
	}
	if g.WriteBackTarget != nil {
		k.set("write-back-target", at+".writeBackTarget", *g.WriteBackTarget)
	}
	return g.PullRequest, at + ".pullRequest", nil
}

// qualifySecret completes git:secret:name with the ImageUpdater's
// namespace and refuses a Secret of another namespace.
func qualifySecret(method, namespace string) (string, error) {
	ref, ok := strings.CutPrefix(strings.TrimSpace(method), "git:secret:")
	if !ok {
		return method, nil
	}
	ns, _, qualified := strings.Cut(ref, "/")
	switch {
	case !qualified:
		return "git:secret:" + namespace + "/" + ref, nil
	case ns != namespace:
		return "", fmt.Errorf("%q: the Secret must be in the ImageUpdater's namespace %s", method, namespace)
	}
	return method, nil
}

// fromRef builds an Application's settings from a reference that does not
// read annotations: spec, then reference, then image, each overriding.
func fromRef(iu *iuv1.ImageUpdater, ref iuv1.ApplicationRef) (*App, []error) {
	k := keyed{values: map[string]string{}, fields: map[string]string{}}
	at := refPath(ref)
	var errs []error
	k.common("", "spec", iu.Spec.CommonUpdateSettings)
	k.common("", at, ref.CommonUpdateSettings)
	pr, prAt, err := k.writeBack("spec", iu.Spec.WriteBackConfig, iu.Namespace)
	if err != nil {
		errs = append(errs, err)
	}
	refPR, refPRAt, err := k.writeBack(at, ref.WriteBackConfig, iu.Namespace)
	if err != nil {
		errs = append(errs, err)
	}
	if refPR != nil {
		pr, prAt = refPR, refPRAt
	}
	var entries []string
	images := map[string]iuv1.ImageConfig{}
	for _, img := range ref.Images {
		imgAt := fmt.Sprintf("%s.images[%s]", at, img.Alias)
		if strings.ContainsAny(img.ImageName, ",= ") {
			errs = append(errs, &Error{Annotation: "image-list", Field: imgAt + ".imageName", Err: fmt.Errorf("%q is not an image name", img.ImageName)})
			continue
		}
		entries = append(entries, img.Alias+"="+img.ImageName)
		images[img.Alias] = img
		k.common(img.Alias+".", imgAt, img.CommonUpdateSettings)
		if t := img.ManifestTarget; t != nil {
			k.targets(img.Alias+".", imgAt+".manifestTargets", t)
		}
	}
	conf, perr := parse(strings.Join(entries, ","), k.get)
	for _, e := range perr {
		var ce *Error
		if errors.As(e, &ce) && ce.Field == "" {
			ce.Field = cmp.Or(k.fields[ce.Annotation], at+".images")
		}
		errs = append(errs, e)
	}
	if conf.WriteBackErr == nil {
		if conf.WriteBack.PullRequest, err = pullRequest(pr, prAt, conf.WriteBack); err != nil {
			conf.WriteBackErr = err
			errs = append(errs, err)
		}
	}
	kept := conf.Images[:0]
	for _, img := range conf.Images {
		cfg := images[img.Alias]
		imgAt := fmt.Sprintf("%s.images[%s]", at, img.Alias)
		if t := cfg.ManifestTarget; t != nil && t.Plugin != nil {
			img.PluginName, img.PluginTag, img.PluginSpec = deref(t.Plugin.Name), deref(t.Plugin.Tag), deref(t.Plugin.Spec)
		}
		v, err := verification(iu, imgAt+".imagesVerification", iu.Spec.ImagesVerification, ref.ImagesVerification, cfg.ImagesVerification)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		img.Verify = v
		kept = append(kept, img)
	}
	conf.Images = kept
	return conf, errs
}

// targets records an image's Helm and Kustomize names; plugin variables
// have no annotation and are set on the parsed image.
func (k keyed) targets(prefix, at string, t *iuv1.ManifestTarget) {
	if h := t.Helm; h != nil {
		if h.Spec != nil {
			k.set(prefix+"helm.image-spec", at+".helm.spec", *h.Spec)
		}
		if h.Name != nil {
			k.set(prefix+"helm.image-name", at+".helm.name", *h.Name)
		}
		if h.Tag != nil {
			k.set(prefix+"helm.image-tag", at+".helm.tag", *h.Tag)
		}
	}
	if t.Kustomize != nil && t.Kustomize.Name != nil {
		k.set(prefix+"kustomize.image-name", at+".kustomize.name", *t.Kustomize.Name)
	}
}

// pullRequest reads the effective pull request settings of a Git
// write-back.
func pullRequest(pr *iuv1.PullRequest, at string, wb WriteBack) (*PullRequest, error) {
	if pr == nil || wb.Method != WriteBackGit {
		return nil, nil
	}
	if (pr.GitHub != nil) == (pr.GitLab != nil) {
		return nil, &Error{Field: at, Err: errors.New("exactly one of github or gitlab must be set")}
	}
	if wb.TargetBranch != "" {
		return nil, &Error{Field: at, Err: fmt.Errorf("the branch %q has the base:target form; with a pull request give only the base branch", wb.Branch)}
	}
	out := &PullRequest{Provider: ProviderGitHub, Labels: pr.Labels}
	if pr.GitHub != nil {
		out.API = pr.GitHub.API
	} else {
		out.Provider, out.API = ProviderGitLab, pr.GitLab.API
	}
	return out, nil
}

// verification merges the levels of imagesVerification (later ones
// override each field): nil when no level has the block or it ends up
// disabled.
func verification(iu *iuv1.ImageUpdater, at string, levels ...*iuv1.ImagesVerification) (*Verification, error) {
	present, enabled := false, true
	var key *iuv1.SecretRef
	for _, l := range levels {
		if l == nil {
			continue
		}
		present = true
		if l.Enabled != nil {
			enabled = *l.Enabled
		}
		if l.CosignKey != nil {
			key = l.CosignKey
		}
	}
	if !present || !enabled {
		return nil, nil
	}
	if key == nil || key.SecretName == "" || key.Key == "" {
		return nil, &Error{Field: at, Err: errors.New("verification is enabled but no cosignKey (secretName and key) is given")}
	}
	return &Verification{Namespace: iu.Namespace, Secret: key.SecretName, Key: key.Key}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
