package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo"
)

type renderFlags struct {
	repoURL, revision, path, chart string
	local                          string
	helmSets, values               []string
	releaseName                    string
	kustomizeImages                []string
	appName, namespace             string
	output                         string
}

// NewRenderCommand returns capstan render: one source rendered as the
// repo server would, from a repository or a local directory.
func NewRenderCommand() *cobra.Command {
	f := &renderFlags{}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render one source's manifests exactly as the repo server would",
		Example: `  capstan render --repo https://git.example.com/apps.git --revision main --path guestbook
  capstan render --local ./deploy --path overlays/prod --kustomize-image nginx=nginx:1.27 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRender(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repoURL, "repo", "", "Git repository URL")
	fl.StringVar(&f.revision, "revision", "HEAD", "branch, tag or commit to render")
	fl.StringVar(&f.path, "path", ".", "directory of the source inside the repository")
	fl.StringVar(&f.chart, "chart", "", "Helm chart name, with --repo a chart repository")
	fl.StringVar(&f.local, "local", "", "render this local directory instead of a repository")
	fl.StringArrayVar(&f.helmSets, "helm-set", nil, "Helm parameter name=value (repeatable)")
	fl.StringArrayVar(&f.values, "values", nil, "Helm values file, relative to the chart (repeatable)")
	fl.StringVar(&f.releaseName, "release-name", "", "Helm release name (default: the app name)")
	fl.StringArrayVar(&f.kustomizeImages, "kustomize-image", nil, "Kustomize image override, such as nginx=nginx:1.27 (repeatable)")
	fl.StringVar(&f.appName, "app-name", "app", "Application name the source is rendered for")
	fl.StringVar(&f.namespace, "dest-namespace", "default", "destination namespace")
	fl.StringVarP(&f.output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

func (f *renderFlags) source() (v1alpha1.ApplicationSource, error) {
	src := v1alpha1.ApplicationSource{RepoURL: f.repoURL, TargetRevision: f.revision, Path: f.path, Chart: f.chart}
	if f.chart != "" {
		src.Path = ""
	}
	if len(f.helmSets) > 0 || len(f.values) > 0 || f.releaseName != "" {
		src.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: f.values, ReleaseName: f.releaseName}
		for _, s := range f.helmSets {
			name, value, ok := strings.Cut(s, "=")
			if !ok {
				return src, fmt.Errorf("--helm-set %q: want name=value", s)
			}
			src.Helm.Parameters = append(src.Helm.Parameters, v1alpha1.HelmParameter{Name: name, Value: value})
		}
	}
	if len(f.kustomizeImages) > 0 {
		src.Kustomize = &v1alpha1.ApplicationSourceKustomize{}
		for _, img := range f.kustomizeImages {
			src.Kustomize.Images = append(src.Kustomize.Images, v1alpha1.KustomizeImage(img))
		}
	}
	return src, nil
}

func runRender(ctx context.Context, w io.Writer, f *renderFlags) error {
	if f.output != "yaml" && f.output != "json" {
		return fmt.Errorf("unknown output format %q: use yaml or json", f.output)
	}
	if (f.local == "") == (f.repoURL == "") {
		return errors.New("give exactly one of --repo and --local")
	}
	src, err := f.source()
	if err != nil {
		return err
	}
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	svc := repo.NewService(repo.Options{Root: filepath.Join(cacheDir, "capstan", "repositories")})
	req := &repo.Request{AppName: f.appName, Namespace: f.namespace}
	var resp *repo.Response
	if f.local != "" {
		resp, err = svc.RenderLocal(ctx, f.local, src, req)
	} else {
		req.Sources = []v1alpha1.ApplicationSource{src}
		resp, err = svc.Render(ctx, req)
	}
	if err != nil {
		return err
	}
	return writeObjects(w, resp.Objects, f.output)
}

func writeObjects(w io.Writer, objs []*unstructured.Unstructured, format string) error {
	if format == "json" {
		items := make([]map[string]any, 0, len(objs))
		for _, o := range objs {
			items = append(items, o.Object)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}
