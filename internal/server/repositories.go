package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-cd/capstan/internal/rbac"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/settings"
)

// repoObject is a repository's RBAC object: <project>/<url>, or the URL
// for a repository of no project.
func repoObject(r *settings.Repository) string {
	if r.Project != "" {
		return r.Project + "/" + r.URL
	}
	return r.URL
}

// repositoryRoutes serves repositories (under /api/v1/repositories) or
// credential templates (templates, under /api/v1/repocreds), or their
// push credentials for the source hydrator (write, under
// /api/v1/write-repositories and /api/v1/write-repocreds). As in Argo CD,
// the first two are the "repositories" RBAC resource and the push
// credentials "write-repositories", served only while the hydrator is on.
type repositoryRoutes struct {
	s                *Server
	templates, write bool
	what             string
	resource         rbac.Resource
}

// repositoryServiceRoutes registers the repository service and the
// repository credentials service, which share their handlers.
func (s *Server) repositoryServiceRoutes() {
	s.repositoryRoutes("/api/v1/repositories", false, false)
	s.mux.HandleFunc("POST /api/v1/repositories/{url}/validate", s.api(s.validateRepository(false)))
	s.repositoryRoutes("/api/v1/repocreds", true, false)
	s.repositoryRoutes("/api/v1/write-repositories", false, true)
	s.mux.HandleFunc("POST /api/v1/write-repositories/{url}/validate", s.api(s.validateRepository(true)))
	s.repositoryRoutes("/api/v1/write-repocreds", true, true)
}

func (s *Server) repositoryRoutes(prefix string, templates, write bool) {
	rr := &repositoryRoutes{s: s, templates: templates, write: write, what: map[bool]string{false: "repository", true: "repository credentials"}[templates],
		resource: rbac.ResourceRepositories}
	if write {
		rr.what, rr.resource = "write "+rr.what, rbac.ResourceWriteRepositories
	}
	for _, route := range []struct {
		pattern string
		handle  func(*http.Request, *caller) (any, error)
	}{{"GET " + prefix, rr.list}, {"GET " + prefix + "/{url}", rr.get}, {"POST " + prefix, rr.create},
		{"DELETE " + prefix + "/{url}", rr.delete}, {"PUT " + prefix + "/{url}", rr.update}} {
		s.mux.HandleFunc(route.pattern, s.api(s.whenHydrating(write, route.handle)))
	}
}

// errHydratorDisabled answers calls for push credentials while the
// source hydrator is off, as Argo CD's API server does.
var errHydratorDisabled = withStatus(http.StatusNotImplemented, errors.New("hydrator is disabled"))

// whenHydrating serves handle, or, for push credentials (write) while the
// hydrator is off, errHydratorDisabled.
func (s *Server) whenHydrating(write bool, handle func(*http.Request, *caller) (any, error)) func(*http.Request, *caller) (any, error) {
	if !write {
		return handle
	}
	return func(r *http.Request, c *caller) (any, error) {
		if !s.opts.HydratorEnabled {
			return nil, errHydratorDisabled
		}
		return handle(r, c)
	}
}

// secretType is the label of the Secrets these routes serve.
func (rr *repositoryRoutes) secretType() string {
	return settings.RepoSecretType(rr.templates, rr.write)
}

func (rr *repositoryRoutes) list(r *http.Request, c *caller) (any, error) {
	all, err := settings.RepositorySecrets(r.Context(), rr.s.opts.Client, rr.s.opts.Namespace, rr.secretType())
	if err != nil {
		return nil, err
	}
	var visible []*settings.Repository
	for _, repo := range all {
		if c.can(rr.resource, rbac.ActionGet, repoObject(repo)) {
			visible = append(visible, repo)
		}
	}
	items := []any{}
	if rr.templates {
		for _, repo := range visible {
			items = append(items, rr.view(repo))
		}
	} else {
		for _, v := range rr.s.withConnections(r.Context(), visible, r.URL.Query().Get("forceRefresh") == "true") {
			items = append(items, v)
		}
	}
	return map[string]any{"items": items}, nil
}

// find returns the stored repository with the path's URL: 404 (or 403 to
// a caller who may not see it) when there is none.
func (rr *repositoryRoutes) find(r *http.Request, c *caller, action rbac.Action) (*settings.Repository, error) {
	url := r.PathValue("url")
	all, err := settings.RepositorySecrets(r.Context(), rr.s.opts.Client, rr.s.opts.Namespace, rr.secretType())
	if err != nil {
		return nil, err
	}
	// Several projects may each have the URL: the query's project picks one.
	project := cmp.Or(r.URL.Query().Get("appProject"), r.URL.Query().Get("project"))
	slices.SortStableFunc(all, func(a, b *settings.Repository) int {
		return cmp.Compare(boolRank(a.Project != project), boolRank(b.Project != project))
	})
	for _, repo := range all {
		if strings.TrimSuffix(repo.URL, "/") != strings.TrimSuffix(url, "/") {
			continue
		}
		if err := c.may(rr.resource, action, repoObject(repo)); err != nil {
			return nil, err
		}
		return repo, nil
	}
	if err := c.may(rr.resource, action, url); err != nil {
		return nil, err
	}
	return nil, notFound(fmt.Sprintf("%s %s not found", rr.what, url))
}

func (rr *repositoryRoutes) get(r *http.Request, c *caller) (any, error) {
	repo, err := rr.find(r, c, rbac.ActionGet)
	switch {
	case err != nil:
		return nil, err
	case rr.templates:
		return rr.view(repo), nil
	}
	return rr.s.withConnections(r.Context(), []*settings.Repository{repo}, r.URL.Query().Get("forceRefresh") == "true")[0], nil
}

// decode reads a repository from the body. Argo CD names a credential
// template's URL "url" (its RepoCreds), a repository's "repo".
func (rr *repositoryRoutes) decode(r *http.Request) (*settings.Repository, error) {
	var body struct {
		settings.Repository
		CredsURL string `json:"url"`
	}
	if err := decode(r, &body, rr.what, false); err != nil {
		return nil, err
	}
	repo := body.Repository
	repo.URL = cmp.Or(repo.URL, body.CredsURL)
	if repo.Depth < 0 {
		return nil, badRequest(fmt.Sprintf("repository depth %d: want 0 or more", repo.Depth))
	}
	return &repo, nil
}

// view is a stored repository as the API shows it: without credentials,
// and for a credential template with its URL also under "url", as Argo
// CD's RepoCreds has it.
func (rr *repositoryRoutes) view(repo *settings.Repository) any {
	shown := repo.Redacted()
	if !rr.templates {
		return shown
	}
	return struct {
		settings.Repository
		CredsURL string `json:"url"`
	}{shown, shown.URL}
}

func (rr *repositoryRoutes) create(r *http.Request, c *caller) (any, error) {
	repo, err := rr.decode(r)
	if err != nil {
		return nil, err
	}
	if repo.URL == "" {
		return nil, badRequest("repo URL is required")
	}
	if repo.Type != "" && repo.Type != "git" && repo.Type != "helm" && repo.Type != "oci" {
		return nil, badRequest(fmt.Sprintf("repository type %q: use git, helm or oci", repo.Type))
	}
	repo.Template, repo.Write = rr.templates, rr.write
	if err := c.may(rr.resource, rbac.ActionCreate, repoObject(repo)); err != nil {
		return nil, err
	}
	if rr.write && !repo.HasCredentials() {
		return nil, badRequest("missing credentials in request")
	}
	if !rr.templates && repo.Type != "helm" {
		if err := rr.s.testRepository(r.Context(), repo); err != nil {
			return nil, withStatus(http.StatusBadRequest, err)
		}
	}
	m := managedSecret{secret: repo.Secret(rr.s.opts.Namespace), what: rr.what,
		stored:     func(ctx context.Context) (*corev1.Secret, error) { return rr.stored(ctx, repo) },
		mayReplace: func(*corev1.Secret) error { return c.may(rr.resource, rbac.ActionUpdate, repoObject(repo)) }}
	if err := rr.s.storeSecret(r.Context(), m, r.URL.Query().Get("upsert") == "true"); err != nil {
		return nil, err
	}
	return rr.view(repo), nil
}

// stored returns the stored Secret of the same kind that holds repo: the
// same URL and project, whatever its name.
func (rr *repositoryRoutes) stored(ctx context.Context, repo *settings.Repository) (*corev1.Secret, error) {
	all, err := settings.RepositorySecrets(ctx, rr.s.opts.Client, rr.s.opts.Namespace, settings.RepoSecretType(rr.templates, rr.write))
	if err != nil {
		return nil, err
	}
	for _, other := range all {
		if git.NormalizeURL(other.URL) == git.NormalizeURL(repo.URL) && other.Project == repo.Project {
			return rr.s.secretNamed(ctx, other.SecretName)
		}
	}
	return nil, nil
}

// update answers PUT <prefix>/{url}: the stored repository (or credential
// template) the path names replaced by the body, in the same Secret; a
// repository's connection is tested first, as when it is added.
func (rr *repositoryRoutes) update(r *http.Request, c *caller) (any, error) {
	found, err := rr.find(r, c, rbac.ActionUpdate)
	if err != nil {
		return nil, err
	}
	repo, err := rr.decode(r)
	if err != nil {
		return nil, err
	}
	repo.URL, repo.Template, repo.Write = found.URL, rr.templates, rr.write
	if err := c.may(rr.resource, rbac.ActionUpdate, repoObject(repo)); err != nil {
		return nil, err
	}
	if !rr.templates && repo.Type != "helm" {
		if err := rr.s.testRepository(r.Context(), repo); err != nil {
			return nil, withStatus(http.StatusBadRequest, err)
		}
	}
	stored, err := rr.s.secretNamed(r.Context(), found.SecretName)
	if err != nil {
		return nil, err
	}
	if err := rr.s.replaceSecret(r.Context(), stored, repo.Secret(rr.s.opts.Namespace)); err != nil {
		return nil, err
	}
	return rr.view(repo), nil
}

func (rr *repositoryRoutes) delete(r *http.Request, c *caller) (any, error) {
	repo, err := rr.find(r, c, rbac.ActionDelete)
	if err != nil {
		return nil, err
	}
	if err := rr.s.deleteSecret(r.Context(), repo.SecretName); err != nil {
		return nil, err
	}
	return map[string]string{}, nil
}

// repoTestTimeout bounds the connection test of a repository being added.
const repoTestTimeout = 30 * time.Second

// testRepository checks, through the repo server, that a Git repository
// can be reached with the given credentials before it is stored, as Argo
// CD does.
func (s *Server) testRepository(ctx context.Context, repo *settings.Repository) error {
	ctx, cancel := context.WithTimeout(ctx, repoTestTimeout)
	defer cancel()
	// Cloud credentials buy their token in the repo server, which holds
	// the Azure workload identity, as it does for stored repositories.
	own := *repo
	own.CloudCreds = settings.CloudCreds{}
	creds, err := own.Resolve(ctx)
	if err != nil {
		return err
	}
	test := &reposvc.TestCredentials{Username: creds.Username, Password: creds.Password, SSHPrivateKey: creds.SSHPrivateKey, Insecure: creds.Insecure,
		TLSClientCert: creds.TLSClientCert, TLSClientKey: creds.TLSClientKey, BearerToken: creds.BearerToken, Proxy: creds.Proxy, NoProxy: creds.NoProxy}
	if cloud := repo.Cloud(); cloud.Any() && test.Username == "" && test.Password == "" && test.BearerToken == "" && test.SSHPrivateKey == "" {
		test.Cloud = &cloud
	}
	_, err = s.opts.Renderer.Resolve(ctx, &reposvc.ResolveRequest{RepoURL: repo.URL, Revision: "HEAD", Credentials: test})
	if err != nil {
		return fmt.Errorf("unable to connect to repository %s: %w", repo.URL, err)
	}
	return nil
}

// validateRepository answers POST /api/v1/repositories/{url}/validate
// (and, with write, /api/v1/write-repositories/{url}/validate, which
// checks push credentials while the hydrator is on):
// whether the repository can be reached with the credentials given (or,
// when none are given, those of a matching credential template), as Argo
// CD's CLI checks before it adds one.
func (s *Server) validateRepository(write bool) func(*http.Request, *caller) (any, error) {
	resource := map[bool]rbac.Resource{false: rbac.ResourceRepositories, true: rbac.ResourceWriteRepositories}[write]
	return s.whenHydrating(write, func(r *http.Request, c *caller) (any, error) {
		return s.validateRepositoryAs(r, c, resource, write)
	})
}

func (s *Server) validateRepositoryAs(r *http.Request, c *caller, resource rbac.Resource, write bool) (any, error) {
	var q struct {
		Username          string `json:"username"`
		Password          string `json:"password"`
		SSHPrivateKey     string `json:"sshPrivateKey"`
		Insecure          bool   `json:"insecure"`
		Type              string `json:"type"`
		Name              string `json:"name"`
		Project           string `json:"project"`
		EnableOCI         bool   `json:"enableOci"`
		TLSClientCertData string `json:"tlsClientCertData"`
		TLSClientCertKey  string `json:"tlsClientCertKey"`
		BearerToken       string `json:"bearerToken"`
		Proxy             string `json:"proxy"`
		NoProxy           string `json:"noProxy"`
		settings.GitHubApp
		settings.CloudCreds
	}
	// Argo CD's gateway takes the URL as the body and the rest in the
	// query; its web UI sends them all in a JSON object.
	data, err := io.ReadAll(r.Body) // bounded by limit
	if err != nil {
		return nil, badRequest(err.Error())
	}
	if err := json.Unmarshal(data, &q); err != nil {
		qs := r.URL.Query()
		q.Username, q.Password, q.SSHPrivateKey, q.Type, q.Name, q.Project = qs.Get("username"), qs.Get("password"), qs.Get("sshPrivateKey"), qs.Get("type"), qs.Get("name"), qs.Get("project")
		q.Insecure, q.EnableOCI = qs.Get("insecure") == "true", qs.Get("enableOci") == "true"
		q.TLSClientCertData, q.TLSClientCertKey, q.BearerToken = qs.Get("tlsClientCertData"), qs.Get("tlsClientCertKey"), qs.Get("bearerToken")
		q.Proxy, q.NoProxy, q.GitHubApp.PrivateKey = qs.Get("proxy"), qs.Get("noProxy"), qs.Get("githubAppPrivateKey")
		q.GitHubApp.EnterpriseBaseURL = qs.Get("githubAppEnterpriseBaseUrl")
		q.CloudCreds = settings.CloudCreds{GCPServiceAccountKey: qs.Get("gcpServiceAccountKey"), UseAzureWorkloadIdentity: qs.Get("useAzureWorkloadIdentity") == "true",
			AzureServicePrincipalClientID: qs.Get("azureServicePrincipalClientId"), AzureServicePrincipalClientSecret: qs.Get("azureServicePrincipalClientSecret"),
			AzureServicePrincipalTenantID: qs.Get("azureServicePrincipalTenantId"), AzureActiveDirectoryEndpoint: qs.Get("azureActiveDirectoryEndpoint")}
		for key, dst := range map[string]*settings.FlexInt{"githubAppID": &q.GitHubApp.ID, "githubAppInstallationID": &q.GitHubApp.InstallationID} {
			if err := dst.UnmarshalJSON([]byte(qs.Get(key))); err != nil {
				return nil, badRequest(fmt.Sprintf("%s: %v", key, err))
			}
		}
	}
	repo := &settings.Repository{URL: r.PathValue("url"), Type: q.Type, Name: q.Name, Username: q.Username, Password: q.Password,
		SSHPrivateKey: q.SSHPrivateKey, Insecure: q.Insecure, Project: q.Project, EnableOCI: q.EnableOCI,
		TLSClientCertData: q.TLSClientCertData, TLSClientCertKey: q.TLSClientCertKey, BearerToken: q.BearerToken, Proxy: q.Proxy, NoProxy: q.NoProxy,
		GitHubApp: q.GitHubApp, CloudCreds: q.CloudCreds}
	if object := repoObject(repo); !c.can(resource, rbac.ActionCreate, object) {
		return nil, c.forbidden(resource, rbac.ActionCreate, object)
	}
	if !repo.HasCredentials() {
		stored, err := (&settings.RepoCredentials{Reader: s.opts.Client, Namespace: s.opts.Namespace, Write: write}).Lookup(r.Context(), repo.URL, repo.Project)
		if err != nil {
			return nil, err
		}
		if err := useStoredCredentials(repo, stored); err != nil {
			return nil, badRequest(err.Error())
		}
	}
	if repo.Type != "helm" {
		if err := s.testRepository(r.Context(), repo); err != nil {
			return nil, badRequest(err.Error())
		}
	}
	return map[string]string{}, nil
}

// useStoredCredentials gives repo, a connection test without credentials
// of its own, the stored ones for its URL and project (nil: none). They
// only travel the way they are stored to: a proxy, or TLS verification
// turned off, that the request chose and the stored repository does not
// say is refused.
func useStoredCredentials(repo, stored *settings.Repository) error {
	if stored == nil || !stored.HasCredentials() {
		return nil
	}
	if (repo.Proxy != "" && repo.Proxy != stored.Proxy) || (repo.NoProxy != "" && repo.NoProxy != stored.NoProxy) {
		return fmt.Errorf("the stored credentials for %s are not sent through a proxy the request chooses: give the credentials, or leave proxy and noProxy unset", repo.URL)
	}
	if repo.Insecure && !stored.Insecure {
		return fmt.Errorf("the stored credentials for %s are not sent with TLS verification off when the stored repository has it on: give the credentials, or leave insecure unset", repo.URL)
	}
	repo.Username, repo.Password, repo.SSHPrivateKey = stored.Username, stored.Password, stored.SSHPrivateKey
	repo.TLSClientCertData, repo.TLSClientCertKey, repo.BearerToken = stored.TLSClientCertData, stored.TLSClientCertKey, stored.BearerToken
	repo.GitHubApp, repo.CloudCreds = stored.GitHubApp, stored.CloudCreds
	repo.Proxy, repo.NoProxy, repo.Insecure = stored.Proxy, stored.NoProxy, stored.Insecure
	return nil
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
