package server

import (
	"cmp"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/rbac"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/ocisource"
	"github.com/capstan-cd/capstan/internal/settings"
)

// What a user picking a source asks of a repository, answered by the repo
// server: GET /api/v1/repositories/{repo}/refs, …/oci-tags, …/apps,
// …/helmcharts, POST …/{source.repoURL}/appdetails, and of an app's
// revisions GET /api/v1/applications/{name}/revisions/{revision}/metadata
// …/chartdetails and …/ocimetadata. The caller needs repositories get on the repository
// (stored or not: a public one need not be).

func (s *Server) exploreRoutes() {
	s.mux.HandleFunc("GET /api/v1/repositories/{url}/refs", s.api(s.repositoryRefs))
	s.mux.HandleFunc("GET /api/v1/repositories/{url}/oci-tags", s.api(s.repositoryRefs))
	s.mux.HandleFunc("GET /api/v1/repositories/{url}/apps", s.api(s.repositoryApps))
	s.mux.HandleFunc("GET /api/v1/repositories/{url}/helmcharts", s.api(s.repositoryCharts))
	s.mux.HandleFunc("POST /api/v1/repositories/{url}/appdetails", s.api(s.repositoryAppDetails))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/revisions/{revision}/metadata", s.api(s.revisionMetadata))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/revisions/{revision}/chartdetails", s.api(s.chartDetails))
	s.mux.HandleFunc("GET /api/v1/applications/{name}/revisions/{revision}/ocimetadata", s.api(s.ociMetadata))
}

// mayExplore checks the caller may read the repository at url (the
// stored one of the project, when there is one): 403 when not.
func (s *Server) mayExplore(r *http.Request, c *caller, url, proj string) error {
	repo := &settings.Repository{URL: url}
	all, err := settings.RepositorySecrets(r.Context(), s.opts.Client, s.opts.Namespace, v1alpha1.SecretTypeRepository)
	if err != nil {
		return err
	}
	for _, stored := range all {
		if strings.TrimSuffix(stored.URL, "/") == strings.TrimSuffix(url, "/") && (proj == "" || stored.Project == "" || stored.Project == proj) {
			repo = stored
			break
		}
	}
	return c.may(rbac.ResourceRepositories, rbac.ActionGet, repoObject(repo))
}

// repositoryRefs answers the refs (branches and tags) and oci-tags calls.
func (s *Server) repositoryRefs(r *http.Request, c *caller) (any, error) {
	url, proj := r.PathValue("url"), r.URL.Query().Get("appProject")
	if err := s.mayExplore(r, c, url, proj); err != nil {
		return nil, err
	}
	refs, err := s.opts.Renderer.Refs(r.Context(), &reposvc.RefsRequest{RepoURL: url, Project: proj, OCI: strings.HasSuffix(r.URL.Path, "/oci-tags")})
	return refs, fromRepo(err)
}

// repositoryApps lists the apps (Helm charts, Kustomizations) of a
// revision, for a caller who may create or update appName in appProject,
// whose sourceRepos allow the repository.
func (s *Server) repositoryApps(r *http.Request, c *caller) (any, error) {
	url, q := r.PathValue("url"), r.URL.Query()
	if err := s.mayExplore(r, c, url, q.Get("appProject")); err != nil {
		return nil, err
	}
	if err := s.mayPickSource(r, c, url, q.Get("appProject"), q.Get("appName")); err != nil {
		return nil, err
	}
	apps, err := s.opts.Renderer.Apps(r.Context(), &reposvc.AppsRequest{RepoURL: url, Revision: q.Get("revision"), Project: q.Get("appProject")})
	return apps, fromRepo(err)
}

// mayPickSource checks, when a project is named, that the caller may
// create or update appName in it and that it allows the repository.
func (s *Server) mayPickSource(r *http.Request, c *caller, url, projName, appName string) error {
	if projName == "" {
		return nil
	}
	object := projName + "/" + appName
	if !c.can(rbac.ResourceApplications, rbac.ActionCreate, object) && !c.can(rbac.ResourceApplications, rbac.ActionUpdate, object) {
		return c.forbidden(rbac.ResourceApplications, rbac.ActionCreate, object)
	}
	proj, err := project.Load(r.Context(), s.opts.Client, s.opts.Namespace, projName)
	if err != nil {
		return err
	}
	if !project.SourcePermitted(proj, url) {
		return withStatus(http.StatusForbidden, fmt.Errorf("repository '%s' not permitted in project '%s'", url, projName))
	}
	return nil
}

// repositoryCharts lists a Helm repository's charts and versions.
func (s *Server) repositoryCharts(r *http.Request, c *caller) (any, error) {
	url := r.PathValue("url")
	if err := s.mayExplore(r, c, url, ""); err != nil {
		return nil, err
	}
	charts, err := s.opts.Renderer.Charts(r.Context(), &reposvc.ChartsRequest{RepoURL: url})
	return charts, fromRepo(err)
}

// repositoryAppDetails describes the source in the body (Argo CD's
// RepoAppDetailsQuery), with the credentials of appProject, as Argo CD's
// handler allows it: the caller needs repositories get on the repository
// and applications get on appProject/appName; for an app that exists, the
// project must be the app's and the source one of its sources now or in
// its history; for one that does not yet, applications create; and the
// project must allow the repository.
func (s *Server) repositoryAppDetails(r *http.Request, c *caller) (any, error) {
	var q struct {
		Source     *v1alpha1.ApplicationSource `json:"source"`
		AppName    string                      `json:"appName"`
		AppProject string                      `json:"appProject"`
		// SourceIndex and VersionID pick the source of a multi-source app
		// and the history entry it is compared with.
		SourceIndex jsonInt `json:"sourceIndex"`
		VersionID   jsonInt `json:"versionId"`
	}
	if err := decode(r, &q, "app details query", false); err != nil {
		return nil, err
	}
	if q.Source == nil {
		return nil, badRequest("missing payload in request")
	}
	if q.Source.RepoURL == "" {
		q.Source.RepoURL = r.PathValue("url")
	}
	if err := s.mayExplore(r, c, q.Source.RepoURL, q.AppProject); err != nil {
		return nil, err
	}
	object := q.AppProject + "/" + q.AppName
	if !c.can(rbac.ResourceApplications, rbac.ActionGet, object) {
		return nil, c.forbidden(rbac.ResourceApplications, rbac.ActionGet, object)
	}
	app := &v1alpha1.Application{}
	err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: q.AppName}, app)
	switch {
	case apierrors.IsNotFound(err) || q.AppName == "":
		if !c.can(rbac.ResourceApplications, rbac.ActionCreate, object) {
			return nil, c.forbidden(rbac.ResourceApplications, rbac.ActionCreate, object)
		}
	case err != nil:
		return nil, err
	case app.Spec.Project != q.AppProject || !sourceInHistory(app, *q.Source, int(q.SourceIndex), int64(q.VersionID)):
		return nil, c.forbidden(rbac.ResourceApplications, rbac.ActionGet, object)
	}
	proj, err := project.Load(r.Context(), s.opts.Client, s.opts.Namespace, q.AppProject)
	if err != nil {
		return nil, err
	}
	if !project.SourcePermitted(proj, q.Source.RepoURL) {
		return nil, withStatus(http.StatusForbidden, fmt.Errorf("repository '%s' not permitted in project '%s'", q.Source.RepoURL, q.AppProject))
	}
	details, err := s.opts.Renderer.AppDetails(r.Context(), &reposvc.AppDetailsRequest{Source: *q.Source, Project: q.AppProject})
	return details, fromRepo(err)
}

// sourceInHistory reports whether src is the app's source at index now,
// or (at the revision it was deployed at) a source of its history entry
// versionID, or of any entry when versionID is 0: a caller may only have
// details of what the app deploys or deployed, never of a source it makes up.
func sourceInHistory(app *v1alpha1.Application, src v1alpha1.ApplicationSource, index int, versionID int64) bool {
	if sources := app.Spec.GetSources(); index >= 0 && index < len(sources) && equalSources(sources[index], src) {
		return true
	}
	for _, h := range app.Status.History {
		if versionID != 0 && h.ID != versionID {
			continue
		}
		sources, revisions := h.Sources, h.Revisions
		if len(sources) == 0 {
			sources, revisions = v1alpha1.ApplicationSources{h.Source}, []string{h.Revision}
		}
		for i, hs := range sources {
			if i < len(revisions) && revisions[i] != "" {
				hs.TargetRevision = revisions[i]
			}
			if equalSources(hs, src) {
				return true
			}
		}
	}
	return false
}

// equalSources compares two sources field by field, the repository URLs
// as Git normalizes them.
func equalSources(a, b v1alpha1.ApplicationSource) bool {
	if git.NormalizeURL(a.RepoURL) != git.NormalizeURL(b.RepoURL) {
		return false
	}
	a.RepoURL, b.RepoURL = "", ""
	return reflect.DeepEqual(a, b)
}

// revisionSource picks the source a revision call is about: the app's
// source at ?sourceIndex (default 0), of the history entry ?versionId
// when given, as Argo CD picks it.
func revisionSource(app *v1alpha1.Application, r *http.Request) (*v1alpha1.ApplicationSource, error) {
	q := r.URL.Query()
	sources := app.Spec.GetSources()
	if v := q.Get("versionId"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("versionId %q: %w", v, err)
		}
		if len(app.Status.History) == 0 {
			return nil, fmt.Errorf("version ID %d not found because the app has no history", id)
		}
		sources = nil
		for _, h := range app.Status.History {
			if h.ID == id {
				sources = h.Sources
				if len(sources) == 0 {
					sources = v1alpha1.ApplicationSources{h.Source}
				}
			}
		}
		if sources == nil {
			return nil, fmt.Errorf("revision history not found for version ID %d", id)
		}
	}
	index, err := strconv.Atoi(cmp.Or(q.Get("sourceIndex"), "0"))
	if err != nil || index < 0 || index >= len(sources) {
		if len(sources) == 1 {
			return nil, fmt.Errorf("source index %s not found because there is only 1 source", q.Get("sourceIndex"))
		}
		return nil, fmt.Errorf("source index %s not found because there are only %d sources", q.Get("sourceIndex"), len(sources))
	}
	return &sources[index], nil
}

// appRevisionSource reads the app the caller may get and the source a
// revision query is about (sourceIndex, versionId).
func (s *Server) appRevisionSource(r *http.Request, c *caller) (*v1alpha1.Application, *v1alpha1.ApplicationSource, error) {
	app, err := s.loadApp(r, c, rbac.ActionGet)
	if err != nil {
		return nil, nil, err
	}
	src, err := revisionSource(app, r)
	if err != nil {
		return nil, nil, badRequest("error getting app source by source index and version ID: " + err.Error())
	}
	return app, src, nil
}

// revisionMetadata answers a commit's author, date, tags and message.
func (s *Server) revisionMetadata(r *http.Request, c *caller) (any, error) {
	app, src, err := s.appRevisionSource(r, c)
	if err != nil {
		return nil, err
	}
	meta, err := s.opts.Renderer.RevisionMetadata(r.Context(), &reposvc.RevisionMetadataRequest{RepoURL: src.RepoURL, Revision: r.PathValue("revision"), Project: app.Spec.Project})
	return meta, fromRepo(err)
}

// chartDetails answers what a chart version's Chart.yaml says.
func (s *Server) chartDetails(r *http.Request, c *caller) (any, error) {
	app, src, err := s.appRevisionSource(r, c)
	if err != nil {
		return nil, err
	}
	if src.Chart == "" {
		return nil, badRequest("no chart found for application: " + app.Name)
	}
	details, err := s.opts.Renderer.ChartDetails(r.Context(), &reposvc.ChartDetailsRequest{RepoURL: src.RepoURL, Chart: src.Chart, Revision: r.PathValue("revision"), Project: app.Spec.Project})
	return details, fromRepo(err)
}

// ociMetadata answers what an OCI source's artifact at a revision says of
// itself (its org.opencontainers.image annotations), as Argo CD's
// GetOCIMetadata: the caller needs applications get on the app.
func (s *Server) ociMetadata(r *http.Request, c *caller) (any, error) {
	app, src, err := s.appRevisionSource(r, c)
	if err != nil {
		return nil, err
	}
	if !ocisource.IsSource(*src) {
		return nil, badRequest(fmt.Sprintf("source %s of application %s is not an OCI source", git.RedactURL(src.RepoURL), app.Name))
	}
	meta, err := s.opts.Renderer.OCIMetadata(r.Context(), &reposvc.OCIMetadataRequest{RepoURL: src.RepoURL, Revision: r.PathValue("revision"), Project: app.Spec.Project})
	return meta, fromRepo(err)
}
