// Package helm renders a Helm chart in-process with Helm's Go SDK, the way
// Argo CD runs `helm template`: value files, inline values, parameters and
// file parameters in Helm's order, the Application's release name and
// namespace, CRDs included unless skipped, and hooks kept (with their
// helm.sh/hook annotations) for the controller to map to sync phases.
package helm

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// Input is one chart and how to render it.
type Input struct {
	// Root is the checkout the chart is in; every file read stays inside it.
	Root string
	// Path is the chart directory, relative to Root.
	Path string
	// Refs maps the ref names of a multi-source Application to their
	// checkouts, for value files written as $<ref>/path.
	Refs map[string]string
	// Helm holds the source's helm options; may be nil.
	Helm *v1alpha1.ApplicationSourceHelm
	// AppName is the release name when Helm.ReleaseName is empty.
	AppName string
	// Namespace is the release namespace when Helm.Namespace is empty.
	Namespace string
	// KubeVersion and APIVersions are the destination cluster's
	// capabilities; Helm.KubeVersion and Helm.APIVersions win over them.
	KubeVersion string
	APIVersions []string
	// Env is the build environment substituted into parameters and value
	// file paths.
	Env map[string]string
	// Dependencies fetches dependencies declared in Chart.yaml but not
	// vendored under charts/. Nil means they must be vendored.
	Dependencies DependencyFetcher
	// ValuesFileSchemes are the URL schemes value files may be fetched
	// over (argocd-cm's helm.valuesFileSchemes). Nil:
	// DefaultValuesFileSchemes; empty: none.
	ValuesFileSchemes []string
}

// DependencyFetcher fetches a chart dependency from its repository and
// returns the directory it was unpacked to.
type DependencyFetcher interface {
	FetchDependency(ctx context.Context, repoURL, name, version string) (string, error)
}

// Render loads the chart and templates it.
func Render(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	h := in.Helm
	if h == nil {
		h = &v1alpha1.ApplicationSourceHelm{}
	}
	root, err := pathsafe.Root(in.Root)
	if err != nil {
		return nil, err
	}
	chartDir, err := pathsafe.Join(root, in.Path)
	if err != nil {
		return nil, err
	}
	if err := pathsafe.CheckTree(root, chartDir); err != nil {
		return nil, err
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %q: %w", in.Path, err)
	}
	if err := addDependencies(ctx, chrt, root, chartDir, in.Dependencies); err != nil {
		return nil, fmt.Errorf("chart %q: %w", in.Path, err)
	}

	tmp, err := os.MkdirTemp("", "capstan-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	opts, err := valueOptions(ctx, root, chartDir, in, h, tmp)
	if err != nil {
		return nil, err
	}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("chart %q: %w", in.Path, err)
	}

	install, err := newInstall(in, h)
	if err != nil {
		return nil, err
	}
	rel, err := install.RunWithContext(ctx, chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("helm template %q: %w", in.Path, err)
	}
	return parseRelease(rel, h.SkipTests)
}

// newInstall is a client-only, dry-run install: what `helm template` runs.
func newInstall(in Input, h *v1alpha1.ApplicationSourceHelm) (*action.Install, error) {
	apis := h.APIVersions
	if len(apis) == 0 {
		apis = in.APIVersions
	}
	install, err := clientOnlyInstall(cmp.Or(h.KubeVersion, in.KubeVersion), apis)
	if err != nil {
		return nil, err
	}
	install.IncludeCRDs = !h.SkipCrds
	install.SkipSchemaValidation = h.SkipSchemaValidation
	install.ReleaseName = cmp.Or(os.Expand(h.ReleaseName, expander(in.Env)), in.AppName)
	install.Namespace = cmp.Or(h.Namespace, in.Namespace, "default")
	return install, nil
}

// clientOnlyInstall is an install that renders without a cluster, for the
// Kubernetes version kubeVersion (empty: Helm's default) and the API
// versions apis.
func clientOnlyInstall(kubeVersion string, apis []string) (*action.Install, error) {
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.DryRunOption = "true"
	install.ClientOnly = true
	install.Replace = true
	if kubeVersion != "" {
		parsed, err := chartutil.ParseKubeVersion(kubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %w", kubeVersion, err)
		}
		install.KubeVersion = parsed
	}
	install.APIVersions = chartutil.VersionSet(apis)
	return install, nil
}

// parseRelease reads the rendered manifest and then the hooks, in the order
// `helm template` prints them.
func parseRelease(rel *release.Release, skipTests bool) ([]*unstructured.Unstructured, error) {
	return manifest.Parse("rendered chart "+rel.Chart.Name(), releaseText(rel, skipTests, true))
}

// releaseText is what `helm template` prints for a release: its manifest,
// then its hooks (test hooks unless skipTests) when withHooks.
func releaseText(rel *release.Release, skipTests, withHooks bool) []byte {
	var out bytes.Buffer
	out.WriteString(rel.Manifest)
	for _, hook := range rel.Hooks {
		if !withHooks || skipTests && isTestHook(hook) {
			continue
		}
		fmt.Fprintf(&out, "\n---\n# Source: %s\n%s\n", hook.Path, hook.Manifest)
	}
	return out.Bytes()
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}

// addDependencies loads each dependency declared in Chart.yaml that is not
// vendored under charts/: file:// ones from the checkout, others through
// fetch. Dependencies of dependencies are handled the same way.
func addDependencies(ctx context.Context, c *chart.Chart, root, chartDir string, fetch DependencyFetcher) error {
	if c.Metadata == nil {
		return nil
	}
	for _, dep := range c.Metadata.Dependencies {
		if hasDependency(c, dep.Name) {
			continue
		}
		var dir string
		var err error
		switch {
		case strings.HasPrefix(dep.Repository, "file://"):
			rel, relErr := filepath.Rel(root, filepath.Join(chartDir, strings.TrimPrefix(dep.Repository, "file://")))
			if relErr != nil {
				return relErr
			}
			dir, err = pathsafe.Join(root, rel)
		case fetch == nil || dep.Repository == "":
			err = errors.New("not in charts/ and no repository to fetch it from")
		default:
			dir, err = fetch.FetchDependency(ctx, dep.Repository, dep.Name, dep.Version)
		}
		if err != nil {
			return fmt.Errorf("dependency %s %s: %w", dep.Name, dep.Version, err)
		}
		sub, err := loader.Load(dir)
		if err != nil {
			return fmt.Errorf("dependency %s: %w", dep.Name, err)
		}
		if err := addDependencies(ctx, sub, root, dir, fetch); err != nil {
			return fmt.Errorf("dependency %s: %w", dep.Name, err)
		}
		c.AddDependency(sub)
	}
	return action.CheckDependencies(c, c.Metadata.Dependencies)
}

func hasDependency(c *chart.Chart, name string) bool {
	for _, d := range c.Dependencies() {
		if d.Name() == name {
			return true
		}
	}
	return false
}

// valueOptions turns the source's helm options into Helm's values options,
// with every file path checked to stay inside its checkout.
func valueOptions(ctx context.Context, root, chartDir string, in Input, h *v1alpha1.ApplicationSourceHelm, tmp string) (*values.Options, error) {
	opts := &values.Options{}
	for i, vf := range h.ValueFiles {
		ref := os.Expand(vf, expander(in.Env))
		if path, remote, err := remoteValueFile(ctx, ref, in.ValuesFileSchemes, tmp, i); remote {
			if err != nil {
				return nil, fmt.Errorf("value file %q: %w", vf, err)
			}
			opts.ValueFiles = append(opts.ValueFiles, path)
			continue
		}
		path, err := resolveValueFile(root, chartDir, in.Refs, ref)
		if err != nil {
			return nil, fmt.Errorf("value file %q: %w", vf, err)
		}
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, os.ErrNotExist) && h.IgnoreMissingValueFiles {
				continue
			}
			return nil, fmt.Errorf("value file %q: %w", vf, errors.Unwrap(err))
		}
		opts.ValueFiles = append(opts.ValueFiles, path)
	}
	// Inline values come after the value files; valuesObject wins over values.
	inline := []byte(h.Values)
	if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
		data, err := yaml.JSONToYAML(h.ValuesObject.Raw)
		if err != nil {
			return nil, fmt.Errorf("valuesObject: %w", err)
		}
		inline = data
	}
	if len(bytes.TrimSpace(inline)) > 0 {
		path := filepath.Join(tmp, "inline-values.yaml")
		if err := os.WriteFile(path, inline, 0o600); err != nil {
			return nil, err
		}
		opts.ValueFiles = append(opts.ValueFiles, path)
	}
	for _, p := range h.Parameters {
		set := p.Name + "=" + escapeCommas(os.Expand(p.Value, expander(in.Env)))
		if p.ForceString {
			opts.StringValues = append(opts.StringValues, set)
		} else {
			opts.Values = append(opts.Values, set)
		}
	}
	for _, fp := range h.FileParameters {
		path, err := resolveValueFile(root, chartDir, in.Refs, os.Expand(fp.Path, expander(in.Env)))
		if err != nil {
			return nil, fmt.Errorf("file parameter %q: %w", fp.Name, err)
		}
		opts.FileValues = append(opts.FileValues, fp.Name+"="+path)
	}
	return opts, nil
}

// resolveValueFile turns a value file reference into an absolute path
// inside its checkout: relative to the chart, or $<ref>/path in the
// checkout of another source.
func resolveValueFile(root, chartDir string, refs map[string]string, ref string) (string, error) {
	if strings.Contains(ref, "://") {
		return "", errors.New("a value file URL must be http or https, over a scheme helm.valuesFileSchemes allows")
	}
	if strings.HasPrefix(ref, "$") {
		name, rest, _ := strings.Cut(ref[1:], "/")
		refRoot, ok := refs[name]
		if !ok {
			return "", fmt.Errorf("no source with ref %q", name)
		}
		return pathsafe.Join(refRoot, rest)
	}
	if filepath.IsAbs(ref) {
		return "", fmt.Errorf("%w: %q is absolute", pathsafe.ErrOutOfBounds, ref)
	}
	rel, err := filepath.Rel(root, filepath.Join(chartDir, ref))
	if err != nil {
		return "", err
	}
	return pathsafe.Join(root, rel)
}

// escapeCommas keeps a parameter value whole: Helm's --set splits on
// unescaped commas.
func escapeCommas(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == ',' && (i == 0 || v[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func expander(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return "$" + k
	}
}
