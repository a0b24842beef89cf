package helm

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"

	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

// TemplateInput is a `helm template` command line, as Kustomize's Helm
// chart inflation writes one (see the kustomize package, which serves it).
type TemplateInput struct {
	// Root bounds the files the chart reaches through file://
	// dependencies. Required.
	Root string
	// ChartDir is the chart's directory, inside Root or a fetched chart's.
	ChartDir string
	// ValueFiles are the -f files, in order; the caller has checked where
	// they are.
	ValueFiles []string
	// ReleaseName is the release; empty generates one from the chart's
	// name, as --generate-name does.
	ReleaseName string
	// Namespace is --namespace; default "default".
	Namespace string
	// KubeVersion and APIVersions are --kube-version and --api-versions.
	KubeVersion string
	APIVersions []string
	// IncludeCRDs, SkipTests and NoHooks are the flags of those names.
	IncludeCRDs, SkipTests, NoHooks bool
	// Dependencies fetches the chart's dependencies that are not vendored.
	Dependencies DependencyFetcher
}

// Template renders a chart as `helm template` does and returns what it
// prints: the manifest, then the hooks.
func Template(ctx context.Context, in TemplateInput) ([]byte, error) {
	if err := pathsafe.CheckTree(in.Root, in.ChartDir); err != nil {
		return nil, err
	}
	chrt, err := loader.Load(in.ChartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", filepath.Base(in.ChartDir), err)
	}
	if err := addDependencies(ctx, chrt, in.Root, in.ChartDir, in.Dependencies); err != nil {
		return nil, fmt.Errorf("chart %s: %w", chrt.Name(), err)
	}
	vals, err := (&values.Options{ValueFiles: in.ValueFiles}).MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", chrt.Name(), err)
	}
	install, err := clientOnlyInstall(in.KubeVersion, in.APIVersions)
	if err != nil {
		return nil, err
	}
	install.IncludeCRDs = in.IncludeCRDs
	install.DisableHooks = in.NoHooks
	install.ReleaseName = cmp.Or(in.ReleaseName, fmt.Sprintf("%s-%d", chrt.Name(), time.Now().Unix()))
	install.Namespace = cmp.Or(in.Namespace, "default")
	rel, err := install.RunWithContext(ctx, chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("helm template %s: %w", chrt.Name(), err)
	}
	return releaseText(rel, in.SkipTests, !in.NoHooks), nil
}

// Version is the version of Helm's SDK Capstan renders with, as
// `helm version --short` prints it.
func Version() string { return chartutil.DefaultCapabilities.HelmVersion.Version }
