package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
	"github.com/capstan-cd/capstan/internal/repo/render/kustomize"
)

// Explorer answers what a user asks of a repository while choosing a
// source, beside rendering: its branches and tags, the apps in it, what
// one source holds, a commit's metadata, and a chart repository's charts.
// The repo server implements it next to Renderer.
type Explorer interface {
	Refs(ctx context.Context, req *RefsRequest) (*RefsResponse, error)
	Apps(ctx context.Context, req *AppsRequest) (*AppsResponse, error)
	AppDetails(ctx context.Context, req *AppDetailsRequest) (*AppDetails, error)
	RevisionMetadata(ctx context.Context, req *RevisionMetadataRequest) (*RevisionMetadata, error)
	ChartDetails(ctx context.Context, req *ChartDetailsRequest) (*chartrepo.Details, error)
	OCIMetadata(ctx context.Context, req *OCIMetadataRequest) (*ocisource.Metadata, error)
	Charts(ctx context.Context, req *ChartsRequest) (*ChartsResponse, error)
	Plugins(ctx context.Context, req *PluginsRequest) (*PluginsResponse, error)
}

// Server is all a repo server does.
type Server interface {
	Renderer
	Explorer
	FilesRenderer
	GitLister
}

var _ Server = (*Service)(nil)

// Bounds of exploring one checkout.
const (
	// maxExploredFiles is how many files and directories a walk visits.
	maxExploredFiles = 10000
	// maxValuesFile bounds a Helm values file read for app details.
	maxValuesFile = 4 << 20
)

// RefsRequest names a Git repository, or with OCI an OCI repository
// (oci://host/path/name, or the registry path and a Chart) whose tags
// are asked for.
type RefsRequest struct {
	RepoURL string `json:"repoURL"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
	OCI     bool   `json:"oci,omitempty"`
	Chart   string `json:"chart,omitempty"`
}

// RefsResponse lists short branch and tag names, sorted.
type RefsResponse struct {
	Branches []string `json:"branches,omitempty"`
	Tags     []string `json:"tags,omitempty"`
}

// AppsRequest names a Git revision to look for apps in.
type AppsRequest struct {
	RepoURL  string `json:"repoURL"`
	Revision string `json:"revision,omitempty"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// AppPath is a directory that holds a Helm chart or a Kustomization.
type AppPath struct {
	Type v1alpha1.ApplicationSourceType `json:"type"`
	Path string                         `json:"path"`
}

// AppsResponse lists the app directories of a revision, by path.
type AppsResponse struct {
	Items []AppPath `json:"items,omitempty"`
}

// AppDetailsRequest is the source to describe.
type AppDetailsRequest struct {
	Source v1alpha1.ApplicationSource `json:"source"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// AppDetails describes a source as Argo CD's app details do.
type AppDetails struct {
	Type      v1alpha1.ApplicationSourceType `json:"type"`
	Helm      *HelmAppSpec                   `json:"helm,omitempty"`
	Kustomize *KustomizeAppSpec              `json:"kustomize,omitempty"`
	Plugin    *PluginAppSpec                 `json:"plugin,omitempty"`
}

// PluginAppSpec is what a config management plugin offers to set.
type PluginAppSpec struct {
	// ParametersAnnouncement are the parameters the plugin announces, each
	// as Argo CD's ParameterAnnouncement JSON.
	ParametersAnnouncement []json.RawMessage `json:"parametersAnnouncement,omitempty"`
}

// HelmAppSpec is what a chart offers to set.
type HelmAppSpec struct {
	// ValueFiles are the chart's files named like values*.yaml.
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Parameters are the values (values.yaml, then the source's value
	// files and parameters), flattened to dotted names.
	Parameters     []v1alpha1.HelmParameter     `json:"parameters,omitempty"`
	Values         string                       `json:"values,omitempty"`
	FileParameters []v1alpha1.HelmFileParameter `json:"fileParameters,omitempty"`
}

// KustomizeAppSpec is what a Kustomization deploys.
type KustomizeAppSpec struct {
	// Images are the images its output names.
	Images []string `json:"images,omitempty"`
}

// RevisionMetadataRequest names one commit (or a revision resolving to one).
type RevisionMetadataRequest struct {
	RepoURL  string `json:"repoURL"`
	Revision string `json:"revision"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// RevisionMetadata is a commit's metadata, as Argo CD's API shows it.
type RevisionMetadata struct {
	Author  string       `json:"author,omitempty"`
	Date    *metav1.Time `json:"date,omitempty"`
	Tags    []string     `json:"tags,omitempty"`
	Message string       `json:"message,omitempty"`
}

// ChartDetailsRequest names a chart version (or constraint).
type ChartDetailsRequest struct {
	RepoURL  string `json:"repoURL"`
	Chart    string `json:"chart"`
	Revision string `json:"revision"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// ChartsRequest names a chart repository.
type ChartsRequest struct {
	RepoURL string `json:"repoURL"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// ChartsResponse lists a chart repository's charts.
type ChartsResponse struct {
	Items []chartrepo.Chart `json:"items,omitempty"`
}

// creds returns the stored credentials of a repository.
func (s *Service) creds(ctx context.Context, repoURL, project string) (git.Creds, error) {
	creds, err := s.opts.Credentials.ForRepo(ctx, repoURL, project)
	if err != nil {
		return git.Creds{}, fmt.Errorf("credentials for %s: %w", git.RedactURL(repoURL), err)
	}
	return creds, nil
}

// gitRepo returns the repository of a Git URL, checked first.
func (s *Service) gitRepo(ctx context.Context, repoURL, revision, project string) (*git.Repo, error) {
	if err := validGitSource(repoURL, revision); err != nil {
		return nil, err
	}
	creds, err := s.creds(ctx, repoURL, project)
	if err != nil {
		return nil, err
	}
	return s.git.Repo(repoURL, creds), nil
}

// Refs lists a Git repository's branches and tags, or an OCI chart's
// versions (as tags), asked afresh.
func (s *Service) Refs(ctx context.Context, req *RefsRequest) (*RefsResponse, error) {
	if req.OCI {
		repoURL, chart := req.RepoURL, req.Chart
		if i := strings.LastIndex(repoURL, "/"); chart == "" && i > 0 {
			repoURL, chart = repoURL[:i], repoURL[i+1:]
		}
		creds, err := s.creds(ctx, req.RepoURL, req.Project)
		if err != nil {
			return nil, err
		}
		tags, err := s.charts.Tags(ctx, repoURL, chart, creds)
		if err != nil {
			return nil, err
		}
		return &RefsResponse{Tags: tags}, nil
	}
	repo, err := s.gitRepo(ctx, req.RepoURL, "", req.Project)
	if err != nil {
		return nil, err
	}
	refs, err := repo.LsRemote(ctx, true)
	if err != nil {
		return nil, err
	}
	return &RefsResponse{Branches: refs.Branches(), Tags: refs.Tags()}, nil
}

// checkout resolves a Git revision and returns its files.
func (s *Service) checkout(ctx context.Context, repoURL, revision, project string) (string, error) {
	repo, err := s.gitRepo(ctx, repoURL, revision, project)
	if err != nil {
		return "", err
	}
	sha, err := repo.Resolve(ctx, revision)
	if err != nil {
		return "", err
	}
	return repo.Checkout(ctx, sha)
}

// ErrNotFound is what a remote repo server's NotFound answer unwraps to.
var ErrNotFound = errors.New("not found")

// IsNotFound reports whether err means a revision, commit or chart does
// not exist, whether the repo server runs in-process or remotely.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, git.ErrRevisionNotFound) || errors.Is(err, chartrepo.ErrChartNotFound)
}

// errWalkBound stops a walk of a checkout past maxExploredFiles.
var errWalkBound = errors.New("the repository has too many files to explore")

// Apps lists the directories of a revision that hold a Helm chart or a
// Kustomization, as Argo CD discovers apps (plain directories are not
// listed).
func (s *Service) Apps(ctx context.Context, req *AppsRequest) (*AppsResponse, error) {
	root, err := s.checkout(ctx, req.RepoURL, req.Revision, req.Project)
	if err != nil {
		return nil, err
	}
	out := &AppsResponse{}
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if seen++; seen > maxExploredFiles {
			return errWalkBound
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		typ := discover(path)
		if typ == v1alpha1.SourceTypeDirectory {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		out.Items = append(out.Items, AppPath{Type: typ, Path: filepath.ToSlash(rel)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing apps of %s: %w", git.RedactURL(req.RepoURL), err)
	}
	return out, nil
}

// discover tells what a directory holds, as sourceType does without an
// explicit type.
func discover(dir string) v1alpha1.ApplicationSourceType {
	if st, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil && !st.IsDir() {
		return v1alpha1.SourceTypeHelm
	}
	if _, ok := kustomize.KustomizationFile(dir); ok {
		return v1alpha1.SourceTypeKustomize
	}
	return v1alpha1.SourceTypeDirectory
}

// AppDetails describes a source: its type and, for Helm, its value files
// and values; for Kustomize, the images it deploys.
func (s *Service) AppDetails(ctx context.Context, req *AppDetailsRequest) (*AppDetails, error) {
	src := req.Source
	var appDir string
	if src.Chart != "" {
		creds, err := s.creds(ctx, src.RepoURL, req.Project)
		if err != nil {
			return nil, err
		}
		version, err := s.charts.Resolve(ctx, src.RepoURL, src.Chart, src.TargetRevision, creds, false)
		if err != nil {
			return nil, err
		}
		if appDir, err = s.charts.Fetch(ctx, src.RepoURL, src.Chart, version, creds); err != nil {
			return nil, err
		}
	} else {
		root, err := s.checkout(ctx, src.RepoURL, src.TargetRevision, req.Project)
		if err != nil {
			return nil, err
		}
		if appDir, err = pathsafe.Join(root, src.Path); err != nil {
			return nil, err
		}
		if details, err := s.pluginDetails(ctx, root, src); details != nil || err != nil {
			return details, err
		}
	}
	typ, err := sourceType(&src, os.DirFS(appDir))
	if err != nil {
		return nil, err
	}
	out := &AppDetails{Type: typ}
	switch typ {
	case v1alpha1.SourceTypeHelm:
		out.Helm, err = helmDetails(appDir, src.Helm)
	case v1alpha1.SourceTypeKustomize:
		var resp *Response
		if resp, err = s.Render(ctx, &Request{AppName: "app-details", Sources: []v1alpha1.ApplicationSource{src}}); err == nil {
			out.Kustomize = &KustomizeAppSpec{Images: resp.Images}
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// helmDetails lists a chart's value files and its values, flattened.
func helmDetails(chartDir string, src *v1alpha1.ApplicationSourceHelm) (*HelmAppSpec, error) {
	spec := &HelmAppSpec{}
	seen := 0
	err := filepath.WalkDir(chartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if seen++; seen > maxExploredFiles {
			return errWalkBound
		}
		name := d.Name()
		if !d.IsDir() && strings.Contains(name, "values") && (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			rel, _ := filepath.Rel(chartDir, path)
			spec.ValueFiles = append(spec.ValueFiles, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	files := []string{"values.yaml"}
	if src != nil {
		files = append(files, src.ValueFiles...)
		spec.FileParameters = src.FileParameters
	}
	params := map[string]string{}
	for i, f := range files {
		path, err := pathsafe.Join(chartDir, f)
		if err != nil {
			continue // remote or $ref value files are not read here
		}
		data, err := readBounded(path, maxValuesFile)
		if err != nil {
			continue
		}
		if i == 0 {
			spec.Values = string(data)
		}
		var values map[string]any
		if err := yaml.Unmarshal(data, &values); err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		flatten("", values, params)
	}
	if src != nil {
		for _, p := range src.Parameters {
			params[p.Name] = p.Value
		}
	}
	for name, value := range params {
		spec.Parameters = append(spec.Parameters, v1alpha1.HelmParameter{Name: name, Value: value})
	}
	slices.SortFunc(spec.Parameters, func(a, b v1alpha1.HelmParameter) int { return strings.Compare(a.Name, b.Name) })
	return spec, nil
}

// flatten writes nested values as dotted names (a.b, list[0].c).
func flatten(prefix string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			flatten(name, sub, out)
		}
	case []any:
		for i, sub := range v {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), sub, out)
		}
	case nil:
		if prefix != "" {
			out[prefix] = ""
		}
	default:
		out[prefix] = fmt.Sprint(v)
	}
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is over %d bytes", filepath.Base(path), limit)
	}
	return os.ReadFile(path)
}

// RevisionMetadata reads a commit's author, date, message and tags.
func (s *Service) RevisionMetadata(ctx context.Context, req *RevisionMetadataRequest) (*RevisionMetadata, error) {
	repo, err := s.gitRepo(ctx, req.RepoURL, req.Revision, req.Project)
	if err != nil {
		return nil, err
	}
	sha, err := repo.Resolve(ctx, req.Revision)
	if err != nil {
		return nil, err
	}
	c, err := repo.CommitInfo(ctx, sha)
	if err != nil {
		return nil, err
	}
	date := metav1.NewTime(c.Date)
	return &RevisionMetadata{Author: c.Author, Date: &date, Tags: c.Tags, Message: c.Message}, nil
}

// OCIMetadataRequest names an OCI source's revision (tag, digest or
// constraint).
type OCIMetadataRequest struct {
	RepoURL  string `json:"repoURL"`
	Revision string `json:"revision"`
	// Project picks the stored credentials: the project's, then unscoped.
	Project string `json:"project,omitempty"`
}

// OCIMetadata reads what an OCI artifact's annotations say of it.
func (s *Service) OCIMetadata(ctx context.Context, req *OCIMetadataRequest) (*ocisource.Metadata, error) {
	creds, err := s.creds(ctx, req.RepoURL, req.Project)
	if err != nil {
		return nil, err
	}
	return s.oci.Metadata(ctx, req.RepoURL, req.Revision, creds)
}

// ChartDetails reads a chart version's description, home and maintainers.
func (s *Service) ChartDetails(ctx context.Context, req *ChartDetailsRequest) (*chartrepo.Details, error) {
	creds, err := s.creds(ctx, req.RepoURL, req.Project)
	if err != nil {
		return nil, err
	}
	return s.charts.ChartDetails(ctx, req.RepoURL, req.Chart, req.Revision, creds)
}

// Charts lists a chart repository's charts and their versions.
func (s *Service) Charts(ctx context.Context, req *ChartsRequest) (*ChartsResponse, error) {
	creds, err := s.creds(ctx, req.RepoURL, req.Project)
	if err != nil {
		return nil, err
	}
	charts, err := s.charts.Charts(ctx, req.RepoURL, creds)
	if err != nil {
		return nil, err
	}
	return &ChartsResponse{Items: charts}, nil
}
