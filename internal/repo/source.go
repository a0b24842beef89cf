package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/repo/render/directory"
	"github.com/capstan-cd/capstan/internal/repo/render/helm"
	"github.com/capstan-cd/capstan/internal/repo/render/kustomize"
)

// sourceInput is one source ready to render from its checkout.
type sourceInput struct {
	root     string
	source   v1alpha1.ApplicationSource
	revision string
	// refs maps each ref name of a multi-source Application to its checkout.
	refs map[string]string
	req  *Request
	// walk is how directory sources are walked (Options.Directories).
	walk directory.Walk
	// deps fetches Helm chart dependencies that are not vendored.
	deps helm.DependencyFetcher
}

// renderSource merges the override files into the source, decides its type
// and renders it. Sources rendered by a config management plugin never come
// here: the Service sends them to their plugin first (see pluginSource).
func renderSource(ctx context.Context, in *sourceInput) ([]*unstructured.Unstructured, v1alpha1.ApplicationSourceType, error) {
	appDir, src, err := in.prepared()
	if err != nil {
		return nil, "", err
	}
	typ, err := in.sourceType(&src, os.DirFS(appDir))
	if err != nil {
		return nil, "", err
	}
	env := buildEnv(in.req, &src, in.revision)
	var objs []*unstructured.Unstructured
	switch typ {
	case v1alpha1.SourceTypeKustomize:
		objs, err = in.renderKustomize(ctx, &src, env)
	case v1alpha1.SourceTypeDirectory:
		objs, err = directory.Render(ctx, in.root, src.Path, src.Directory, env, in.directoryWalk())
	case v1alpha1.SourceTypeHelm:
		objs, err = helm.Render(ctx, helm.Input{
			Root: in.root, Path: src.Path, Refs: in.refs, Helm: src.Helm,
			AppName: in.req.AppName, Namespace: in.req.Namespace,
			KubeVersion: in.req.KubeVersion, APIVersions: in.req.APIVersions,
			Env: env, Dependencies: in.deps, ValuesFileSchemes: in.req.HelmValuesFileSchemes,
		})
	default:
		err = fmt.Errorf("%s sources are rendered by their plugin, not here", typ)
	}
	if err != nil {
		return nil, typ, err
	}
	return objs, typ, nil
}

// renderKustomize builds with the built-in Kustomize and argocd-cm's
// kustomize.buildOptions, or with the program argocd-cm registers for the
// version the source names and that version's options.
func (in *sourceInput) renderKustomize(ctx context.Context, src *v1alpha1.ApplicationSource, env map[string]string) ([]*unstructured.Unstructured, error) {
	k := kustomize.Input{Root: in.root, Path: src.Path, Kustomize: src.Kustomize, Env: env,
		KubeVersion: in.req.KubeVersion, APIVersions: in.req.APIVersions, Charts: in.deps}
	if src.Kustomize != nil && src.Kustomize.Version != "" {
		i := slices.IndexFunc(in.req.KustomizeVersions, func(v v1alpha1.KustomizeVersion) bool { return v.Name == src.Kustomize.Version })
		if i < 0 {
			return nil, fmt.Errorf("kustomize version %s is not registered", src.Kustomize.Version)
		}
		v := in.req.KustomizeVersions[i]
		k.Binary = &kustomize.Binary{Path: v.Path, Args: strings.Fields(v.BuildOptions)}
		return kustomize.Render(ctx, k)
	}
	var err error
	if k.Build, err = kustomize.ParseBuildOptions(in.req.KustomizeBuildOptions); err != nil {
		return nil, err
	}
	return kustomize.Render(ctx, k)
}

// prepared returns the source's directory in its checkout and the source
// with its directory's override files merged in.
func (in *sourceInput) prepared() (string, v1alpha1.ApplicationSource, error) {
	src := in.source
	appDir, err := pathsafe.Join(in.root, src.Path)
	if err != nil {
		return "", src, err
	}
	if st, err := os.Stat(appDir); err != nil || !st.IsDir() {
		return "", src, fmt.Errorf("path %q does not exist in %s at %s", src.Path, redactedURL(src.RepoURL), shortSHA(in.revision))
	}
	if src.Chart == "" { // override files live in Git sources only
		if err := mergeOverrideFiles(&src, os.DirFS(appDir), in.req.AppName); err != nil {
			return "", src, err
		}
	}
	return appDir, src, nil
}

// runsRepositoryCode reports whether rendering the source runs a program
// or template from its repository: Helm, Kustomize, Jsonnet. Those render
// in a worker when the Service isolates rendering; a directory of plain
// manifests is only parsed, with its sizes bounded and YAML aliases
// refused, and renders in-process, as Argo CD's repo server renders it:
// no worker's memory, no round trip. When in doubt (an error the render
// will report), it says yes.
func (in *sourceInput) runsRepositoryCode(ctx context.Context) bool {
	appDir, src, err := in.prepared()
	if err != nil {
		return true
	}
	if typ, err := in.sourceType(&src, os.DirFS(appDir)); err != nil || typ != v1alpha1.SourceTypeDirectory {
		return true
	}
	jsonnet, err := directory.EvaluatesJsonnet(ctx, in.root, src.Path, src.Directory, in.directoryWalk())
	return err != nil || jsonnet
}

// overrideFiles are merged into a source in this order, as Argo CD does; the
// image updater's Git write-back writes the second one.
func overrideFiles(appName string) []string {
	return []string{".argocd-source.yaml", ".argocd-source-" + appName + ".yaml"}
}

// mergeOverrideFiles applies each override file present in the source's
// directory appDir to src as a JSON merge patch (RFC 7386): maps merge,
// lists are replaced.
func mergeOverrideFiles(src *v1alpha1.ApplicationSource, appDir fs.FS, appName string) error {
	for _, name := range overrideFiles(appName) {
		data, err := fs.ReadFile(appDir, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		patch, err := yaml.YAMLToJSON(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		current, err := json.Marshal(src)
		if err != nil {
			return err
		}
		merged, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var out v1alpha1.ApplicationSource
		if err := json.Unmarshal(merged, &out); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		// The override may change how the source renders, never where it is.
		out.RepoURL, out.Path, out.TargetRevision, out.Chart, out.Ref = src.RepoURL, src.Path, src.TargetRevision, src.Chart, src.Ref
		*src = out
	}
	return nil
}

// sourceType is the source's type, as sourceType decides it, but a
// plain directory when argocd-cm turns that type's tool off.
func (in *sourceInput) sourceType(src *v1alpha1.ApplicationSource, appDir fs.FS) (v1alpha1.ApplicationSourceType, error) {
	typ, err := sourceType(src, appDir)
	if err != nil {
		return typ, err
	}
	off := in.req.DisabledTools
	if (typ == v1alpha1.SourceTypeHelm && slices.Contains(off, ToolHelm)) || (typ == v1alpha1.SourceTypeKustomize && slices.Contains(off, ToolKustomize)) {
		return v1alpha1.SourceTypeDirectory, nil
	}
	return typ, nil
}

// directoryWalk is how this source's directory is walked: the Service's
// way, leaving Jsonnet files out when argocd-cm turns Jsonnet off.
func (in *sourceInput) directoryWalk() directory.Walk {
	w := in.walk
	w.NoJsonnet = w.NoJsonnet || slices.Contains(in.req.DisabledTools, ToolJsonnet)
	return w
}

// sourceType is the source's explicit type or, without one, what the path
// holds.
func sourceType(src *v1alpha1.ApplicationSource, appDir fs.FS) (v1alpha1.ApplicationSourceType, error) {
	typ, err := explicitType(src)
	if err != nil || typ != "" {
		return typ, err
	}
	return detectedType(src, appDir), nil
}

// explicitType is the one of helm, kustomize, directory and plugin the
// source sets, or "" when it sets none.
func explicitType(src *v1alpha1.ApplicationSource) (v1alpha1.ApplicationSourceType, error) {
	var explicit []v1alpha1.ApplicationSourceType
	if src.Helm != nil && !isZero(src.Helm) {
		explicit = append(explicit, v1alpha1.SourceTypeHelm)
	}
	if src.Kustomize != nil && !isZero(src.Kustomize) {
		explicit = append(explicit, v1alpha1.SourceTypeKustomize)
	}
	if src.Directory != nil && !isZero(src.Directory) {
		explicit = append(explicit, v1alpha1.SourceTypeDirectory)
	}
	if src.Plugin != nil {
		explicit = append(explicit, v1alpha1.SourceTypePlugin)
	}
	if len(explicit) > 1 {
		return "", fmt.Errorf("multiple application source types set: %v", explicit)
	}
	if len(explicit) == 1 {
		return explicit[0], nil
	}
	return "", nil
}

// detectedType is the type of a source setting none: a chart, a Helm chart
// directory, a Kustomization, else a plain directory.
func detectedType(src *v1alpha1.ApplicationSource, appDir fs.FS) v1alpha1.ApplicationSourceType {
	if src.Chart != "" {
		return v1alpha1.SourceTypeHelm
	}
	if _, err := fs.Stat(appDir, "Chart.yaml"); err == nil {
		return v1alpha1.SourceTypeHelm
	}
	if _, ok := kustomize.KustomizationFileIn(appDir); ok {
		return v1alpha1.SourceTypeKustomize
	}
	return v1alpha1.SourceTypeDirectory
}

func isZero(v any) bool {
	data, _ := json.Marshal(v)
	return string(data) == "{}"
}

// buildEnv is the build environment Argo CD gives tools and substitutes in
// parameters.
func buildEnv(req *Request, src *v1alpha1.ApplicationSource, revision string) map[string]string {
	return map[string]string{
		"ARGOCD_APP_NAME":                   req.AppName,
		"ARGOCD_APP_NAMESPACE":              req.Namespace,
		"ARGOCD_APP_PROJECT_NAME":           req.Project,
		"ARGOCD_APP_REVISION":               revision,
		"ARGOCD_APP_REVISION_SHORT":         shortSHA(revision),
		"ARGOCD_APP_REVISION_SHORT_8":       shortened(revision, 8),
		"ARGOCD_APP_SOURCE_PATH":            src.Path,
		"ARGOCD_APP_SOURCE_REPO_URL":        src.RepoURL,
		"ARGOCD_APP_SOURCE_TARGET_REVISION": src.TargetRevision,
		"KUBE_VERSION":                      req.KubeVersion,
		"KUBE_API_VERSIONS":                 strings.Join(req.APIVersions, ","),
	}
}

func redactedURL(u string) string {
	if u == "" {
		return "the local directory"
	}
	return git.RedactURL(u)
}

// RenderLocal renders a source from a local directory, without Git: what
// `capstan render --local` does. src.Path is relative to dir.
func (s *Service) RenderLocal(ctx context.Context, dir string, src v1alpha1.ApplicationSource, req *Request) (*Response, error) {
	objs, typ, err := s.renderSource(ctx, &sourceInput{root: dir, source: src, refs: map[string]string{}, req: req, walk: s.opts.Directories, deps: dependencyFetcher{s, req.Project}})
	if err != nil {
		return nil, err
	}
	return &Response{Objects: objs, Sources: []SourceResult{{Type: typ}}, Images: imagesOf(objs)}, nil
}

// dependencyFetcher fetches Helm chart dependencies with the credentials of
// their repositories.
type dependencyFetcher struct {
	s       *Service
	project string // whose credentials are used
}

// helmAlias is the repository name a Helm dependency's "@name" or
// "alias:name" repository refers to.
func helmAlias(repository string) (string, bool) {
	if name, ok := strings.CutPrefix(repository, "@"); ok {
		return name, true
	}
	return strings.CutPrefix(repository, "alias:")
}

func (d dependencyFetcher) FetchDependency(ctx context.Context, repoURL, name, version string) (string, error) {
	if alias, ok := helmAlias(repoURL); ok {
		names, ok := d.s.opts.Credentials.(RepoNames)
		if !ok {
			return "", fmt.Errorf("repository %q: no repository is named %q", repoURL, alias)
		}
		url, err := names.URLByName(ctx, alias, d.project)
		if err != nil {
			return "", fmt.Errorf("repository %q: %w", repoURL, err)
		}
		repoURL = url
	}
	creds, err := d.s.opts.Credentials.ForRepo(ctx, repoURL, d.project)
	if err != nil {
		return "", err
	}
	resolved, err := d.s.charts.Resolve(ctx, repoURL, name, version, creds, false)
	if err != nil {
		return "", err
	}
	return d.s.charts.Fetch(ctx, repoURL, name, resolved, creds)
}
