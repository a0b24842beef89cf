// Package config reads an Application's Argo CD Image Updater annotations
// (argocd-image-updater.argoproj.io/...) into typed settings: the images
// to watch, how each picks its next tag, where the new tag is written.
// A malformed annotation is an error naming it; the images it does not
// concern are still read, so one typo does not stop the others.
package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/capstan-cd/capstan/internal/imageupdater/tags"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// Prefix starts every annotation the image updater reads.
const Prefix = "argocd-image-updater.argoproj.io/"

// Image is one entry of image-list with its settings.
type Image struct {
	// Alias names the image in the other annotations (may be empty).
	Alias string
	// Name is the image without tag: registry/repository.
	Name string
	// Constraint follows the name in image-list: a semver constraint, or
	// the tag to follow with digest.
	Constraint string
	Strategy   tags.Strategy
	Filter     tags.Filter
	// Platforms limit a multi-arch image to these os/arch[/variant].
	Platforms []string
	// PullSecret is pullsecret:ns/name, secret:ns/name#field, env:VAR or
	// ext:/path/to/script.
	PullSecret  string
	ForceUpdate bool
	// Helm parameter names for the image (helm.image-name, image-tag,
	// image-spec) and the Kustomize image name (kustomize.image-name).
	HelmImageName, HelmImageTag, HelmImageSpec string
	KustomizeImageName                         string
	// Plugin environment variables of a config management plugin source
	// that carry the image (an ImageUpdater's manifestTargets.plugin):
	// PluginSpec holds name:tag; else PluginName and PluginTag.
	PluginName, PluginTag, PluginSpec string
	// Verify, if set, is the signature a new version must carry before it
	// is written back.
	Verify *Verification
}

// HasPluginTarget reports whether the image is carried by plugin
// environment variables.
func (img Image) HasPluginTarget() bool {
	return img.PluginSpec != "" || img.PluginName != "" || img.PluginTag != ""
}

// Verification is a cosign public key a new version's signature must
// verify with.
type Verification struct {
	// Namespace, Secret and Key locate the PEM public key.
	Namespace, Secret, Key string
}

// WriteBackMethod is where new tags are written (write-back-method).
type WriteBackMethod string

// The write-back methods.
const (
	// WriteBackArgoCD writes to the Application's spec (the default).
	WriteBackArgoCD WriteBackMethod = "argocd"
	// WriteBackGit commits to the source's Git repository.
	WriteBackGit WriteBackMethod = "git"
)

// WriteBackTarget is the file a Git write-back edits (write-back-target).
type WriteBackTarget string

// The write-back targets.
const (
	// TargetOverrideFile is .argocd-source-<app>.yaml beside the source
	// (the default; plain directories have their manifests edited).
	TargetOverrideFile WriteBackTarget = ""
	// TargetKustomization is a kustomization's images list.
	TargetKustomization WriteBackTarget = "kustomization"
	// TargetHelmValues is a Helm values file.
	TargetHelmValues WriteBackTarget = "helmvalues"
)

// WriteBack says where new tags go.
type WriteBack struct {
	Method WriteBackMethod
	// Secret is the ns/name of the Git credentials of git:secret:ns/name;
	// RepoCreds is set for git:repocreds.
	Secret    string
	RepoCreds bool
	// Target is the file a Git write-back edits, with TargetPath the file
	// or directory it names.
	Target     WriteBackTarget
	TargetPath string
	// Branch is git-branch (or git.branch) as written: "branch", or
	// "base:target" to push to target created from base. BaseBranch and
	// TargetBranch are its two parts; TargetBranch is a template of the
	// changes (see writeback.Branch), checked when parsed.
	Branch       string
	BaseBranch   string
	TargetBranch string
	// Repository is git-repository: where to push, if not the source's.
	Repository string
	// CommitMessage is the Application's commit message template
	// (git.commit-message), if any.
	CommitMessage string
	// PullRequest, if set, sends the commit to a branch of its own and
	// opens or updates a pull (merge) request into the base branch.
	PullRequest *PullRequest
}

// Provider is the Git hosting service that receives pull requests.
type Provider string

// The pull request providers.
const (
	ProviderGitHub Provider = "github"
	ProviderGitLab Provider = "gitlab"
)

// PullRequest is a pull (merge) request write-back.
type PullRequest struct {
	Provider Provider
	// API is the provider's API address; empty follows the repository.
	API    string
	Labels []string
}

// App is an Application's image updater settings.
type App struct {
	Images    []Image
	WriteBack WriteBack
	// WriteBackErr is set when the write-back annotations are malformed:
	// nothing may then be written for the Application.
	WriteBackErr error
}

// Error is a malformed annotation, or a malformed ImageUpdater field.
type Error struct {
	// Annotation is the annotation's key without Prefix.
	Annotation string
	// Field, when the setting came from an ImageUpdater, is its path
	// there (spec.applicationRefs[app-*].images[web].allowTags).
	Field string
	Err   error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("annotation %s%s: %v", Prefix, e.Annotation, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Parse reads the annotations of an Application. It returns nil when the
// Application has no image-list. Errors are per annotation; an image
// whose own settings are malformed is left out, the others are kept.
func Parse(annotations map[string]string) (*App, []error) {
	list, ok := annotations[Prefix+"image-list"]
	if !ok {
		return nil, nil
	}
	get := func(key string) (string, bool) {
		v, ok := annotations[Prefix+key]
		return strings.TrimSpace(v), ok
	}
	return parse(list, get)
}

// parse reads the settings get returns by annotation key (without
// Prefix) for the images of list.
func parse(list string, get func(string) (string, bool)) (*App, []error) {
	var errs []error
	app := &App{}
	wb, err := parseWriteBack(get)
	if err != nil {
		errs = append(errs, err)
		app.WriteBackErr = err
	}
	app.WriteBack = wb
	for _, entry := range strings.Split(list, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		img, err := parseImage(entry, get)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		app.Images = append(app.Images, *img)
	}
	return app, errs
}

// parseImage reads one image-list entry, [alias=]image[:constraint], and
// the settings named <alias>.<key>, falling back to the app-wide <key>.
func parseImage(entry string, get func(string) (string, bool)) (*Image, error) {
	img := &Image{}
	ref := entry
	if alias, rest, ok := strings.Cut(entry, "="); ok {
		img.Alias, ref = strings.TrimSpace(alias), strings.TrimSpace(rest)
		if img.Alias == "" || strings.ContainsAny(img.Alias, " /:") {
			return nil, &Error{Annotation: "image-list", Err: fmt.Errorf("alias %q in %q is not a plain name", img.Alias, entry)}
		}
	}
	img.Name, img.Constraint = splitConstraint(ref)
	if img.Name == "" {
		return nil, &Error{Annotation: "image-list", Err: fmt.Errorf("entry %q names no image", entry)}
	}
	setting := func(key string) (string, string) {
		if img.Alias != "" {
			if v, ok := get(img.Alias + "." + key); ok {
				return v, img.Alias + "." + key
			}
		}
		v, _ := get(key)
		return v, key
	}
	v, key := setting("update-strategy")
	st, _, err := tags.ParseStrategy(v)
	if err != nil {
		return nil, &Error{Annotation: key, Err: err}
	}
	img.Strategy = st
	allow, allowKey := setting("allow-tags")
	ignore, ignoreKey := setting("ignore-tags")
	if err := (&tags.Filter{Allow: allow}).Compile(); err != nil {
		return nil, &Error{Annotation: allowKey, Err: err}
	}
	img.Filter = tags.Filter{Allow: allow, Ignore: splitList(ignore)}
	if err := img.Filter.Compile(); err != nil {
		return nil, &Error{Annotation: ignoreKey, Err: err}
	}
	platforms, key := setting("platforms")
	for _, p := range splitList(platforms) {
		if parts := strings.Split(p, "/"); len(parts) < 2 || len(parts) > 3 {
			return nil, &Error{Annotation: key, Err: fmt.Errorf("platform %q is not os/arch[/variant]", p)}
		}
		img.Platforms = append(img.Platforms, p)
	}
	img.PullSecret, key = setting("pull-secret")
	if s := img.PullSecret; s != "" && !hasAnyPrefix(s, "pullsecret:", "secret:", "env:", "ext:") {
		return nil, &Error{Annotation: key, Err: fmt.Errorf("%q: want pullsecret:ns/name, secret:ns/name#field, env:VAR or ext:/path", s)}
	}
	if v, key := setting("force-update"); v != "" {
		if img.ForceUpdate, err = strconv.ParseBool(v); err != nil {
			return nil, &Error{Annotation: key, Err: fmt.Errorf("%q is not true or false", v)}
		}
	}
	img.HelmImageName, _ = setting("helm.image-name")
	img.HelmImageTag, _ = setting("helm.image-tag")
	img.HelmImageSpec, _ = setting("helm.image-spec")
	img.KustomizeImageName, _ = setting("kustomize.image-name")
	return img, nil
}

// splitConstraint splits image[:constraint], telling a registry port
// (host:5000/repo) from a constraint.
func splitConstraint(ref string) (string, string) {
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

func parseWriteBack(get func(string) (string, bool)) (WriteBack, error) {
	wb := WriteBack{Method: WriteBackArgoCD}
	method, _ := get("write-back-method")
	switch {
	case method == "" || method == string(WriteBackArgoCD):
	case method == string(WriteBackGit):
		wb.Method = WriteBackGit
	case method == "git:repocreds":
		wb.Method, wb.RepoCreds = WriteBackGit, true
	case strings.HasPrefix(method, "git:secret:"):
		wb.Method, wb.Secret = WriteBackGit, strings.TrimPrefix(method, "git:secret:")
		if ns, name, ok := strings.Cut(wb.Secret, "/"); !ok || ns == "" || name == "" {
			return WriteBack{Method: WriteBackArgoCD}, &Error{Annotation: "write-back-method", Err: fmt.Errorf("%q: the secret must be namespace/name", method)}
		}
	default:
		return WriteBack{Method: WriteBackArgoCD}, &Error{Annotation: "write-back-method", Err: fmt.Errorf("%q: want argocd, git, git:secret:ns/name or git:repocreds", method)}
	}
	if target, ok := get("write-back-target"); ok && target != "" {
		kind, path, _ := strings.Cut(target, ":")
		switch WriteBackTarget(kind) {
		case TargetKustomization, TargetHelmValues:
			wb.Target, wb.TargetPath = WriteBackTarget(kind), path
		default:
			// A bare path names the parameter override file. A
			// kustomization there would lose its content.
			switch filepath.Base(target) {
			case "kustomization.yaml", "kustomization.yml", "Kustomization":
				return wb, &Error{Annotation: "write-back-target", Err: fmt.Errorf("%q is a kustomization, which a parameter override file would replace: use kustomization:%s to edit it in place", target, target)}
			}
			wb.TargetPath = target
		}
	}
	annotation := "git-branch"
	wb.Branch, _ = get(annotation)
	if wb.Branch == "" {
		annotation = "git.branch" // a spelling found in published setups
		wb.Branch, _ = get(annotation)
	}
	wb.BaseBranch, wb.TargetBranch, _ = strings.Cut(wb.Branch, ":")
	if _, err := safetext.Parse("branch", wb.TargetBranch, nil, "missingkey=error"); err != nil {
		return wb, &Error{Annotation: annotation, Err: fmt.Errorf("%q: the target branch is not a valid template: %w", wb.Branch, err)}
	}
	wb.Repository, _ = get("git-repository")
	wb.CommitMessage, _ = get("git.commit-message")
	return wb, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
