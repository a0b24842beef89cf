package scm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

// azureDefaultAPI is Azure DevOps Services; organizations answer under it.
const azureDefaultAPI = "https://dev.azure.com"

// azureName starts the provider's errors.
const azureName = "Azure DevOps"

// Type keys of the Azure DevOps errors the provider tells apart.
const (
	azureRepoNotFound = "GitRepositoryNotFoundException"
	azureItemNotFound = "GitItemNotFoundException"
)

// azureBranchPrefix starts the full name of a branch.
const azureBranchPrefix = "refs/heads/"

// azureDevOps reads the git repositories of an Azure DevOps team project.
type azureDevOps struct {
	conn         *azuredevops.Connection
	hc           *http.Client
	org, project string

	mu     sync.Mutex
	client git.Client
}

// AzureDevOps returns the Provider of a team project of organization,
// through the azure-devops-go-api git client; api is Azure DevOps
// Server's address (empty: https://dev.azure.com), token a personal
// access token. Disabled repositories and those without a default branch
// are left out, as in Argo CD; repositories carry no labels.
func AzureDevOps(api, organization, project, token string, hc *http.Client) (Provider, error) {
	if organization == "" || project == "" {
		return nil, fmt.Errorf("%s: organization and teamProject are required", azureName)
	}
	if token == "" {
		return nil, fmt.Errorf("%s project %s/%s: no access token", azureName, organization, project)
	}
	if api == "" {
		api = azureDefaultAPI
	}
	base := strings.TrimSuffix(api, "/") + "/" + organization
	return &azureDevOps{conn: azuredevops.NewPatConnection(base, token), hc: httpClient(hc), org: organization, project: project}, nil
}

// where names the team project in errors.
func (a *azureDevOps) where() string {
	return fmt.Sprintf("%s project %s/%s", azureName, a.org, a.project)
}

// git returns the git client, finding the organization's git service
// on the first call.
func (a *azureDevOps) git(ctx context.Context) (git.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client == nil {
		c, err := azureGitClient(ctx, a.conn, a.hc)
		if err != nil {
			return nil, fmt.Errorf("%s: finding the git service: %w", a.where(), err)
		}
		a.client = c
	}
	return a.client, nil
}

// azureGitClient builds the git client as git.NewClient does (the
// organization's resource areas give the git service's address; Azure
// DevOps Server lists none and serves it at the base), but on hc: the
// library's own clients have no timeout.
func azureGitClient(ctx context.Context, conn *azuredevops.Connection, hc *http.Client) (git.Client, error) {
	areas, err := azuredevops.NewClientWithOptions(conn, conn.BaseUrl, azuredevops.WithHTTPClient(hc)).GetResourceAreas(ctx)
	if err != nil {
		return nil, err
	}
	url := conn.BaseUrl
	if areas != nil && len(*areas) > 0 {
		i := slices.IndexFunc(*areas, func(r azuredevops.ResourceAreaInfo) bool { return r.Id != nil && *r.Id == git.ResourceAreaId })
		if i < 0 || (*areas)[i].LocationUrl == nil {
			return nil, errors.New("the organization lists no git resource area")
		}
		url = *(*areas)[i].LocationUrl
	}
	return &git.ClientImpl{Client: *azuredevops.NewClientWithOptions(conn, strings.TrimSuffix(url, "/"), azuredevops.WithHTTPClient(hc))}, nil
}

// azureTypeKey is the type key of an Azure DevOps error ("" for others).
// The library returns its error both as a value and as a pointer.
func azureTypeKey(err error) string {
	var v azuredevops.WrappedError
	if errors.As(err, &v) && v.TypeKey != nil {
		return *v.TypeKey
	}
	var p *azuredevops.WrappedError
	if errors.As(err, &p) && p != nil && p.TypeKey != nil {
		return *p.TypeKey
	}
	return ""
}

// Repositories implements Provider. Argo CD always gives the https clone
// URL (remoteUrl), so an unset protocol means https here; ssh gives
// sshUrl.
func (a *azureDevOps) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	c, err := a.git(ctx)
	if err != nil {
		return nil, err
	}
	repos, err := c.GetRepositories(ctx, git.GetRepositoriesArgs{Project: &a.project})
	if err != nil {
		return nil, fmt.Errorf("%s: listing repositories: %w", a.where(), err)
	}
	if repos == nil {
		return nil, nil
	}
	if len(*repos) > MaxRepositories {
		return nil, fmt.Errorf("%s has more than %d repositories; the generator stops there", a.where(), MaxRepositories)
	}
	if protocol == "" {
		protocol = "https"
	}
	var out []Repository
	for _, r := range *repos {
		if r.Name == nil || r.DefaultBranch == nil || r.IsDisabled != nil && *r.IsDisabled {
			continue
		}
		url, err := cloneURL(protocol, azureString(r.SshUrl), azureString(r.RemoteUrl))
		if err != nil {
			return nil, err
		}
		out = append(out, Repository{Organization: a.org, Repository: *r.Name, URL: url,
			Branch: strings.TrimPrefix(*r.DefaultBranch, azureBranchPrefix)})
	}
	return out, nil
}

// Branches implements Provider. A repository Azure DevOps no longer
// finds (as a disabled one answers) has no branches, as in Argo CD.
func (a *azureDevOps) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	c, err := a.git(ctx)
	if err != nil {
		return nil, err
	}
	where := a.repoWhere(repo)
	if !all {
		b, err := c.GetBranch(ctx, git.GetBranchArgs{RepositoryId: &repo.Repository, Project: &a.project, Name: &repo.Branch})
		switch {
		case azureTypeKey(err) == azureRepoNotFound:
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, repo.Branch, err)
		case b.Commit == nil || b.Commit.CommitId == nil:
			return nil, fmt.Errorf("%s: branch %s has no commit", where, repo.Branch)
		}
		repo.SHA = *b.Commit.CommitId
		return []Repository{repo}, nil
	}
	refs, err := tokenPages(MaxBranches, where+" branches", func(token string) ([]git.GitRef, string, error) {
		refs, next, err := a.refs(ctx, c, repo.Repository, token)
		if err != nil {
			return nil, "", fmt.Errorf("%s: listing branches: %w", where, err)
		}
		return refs, next, nil
	})
	if azureTypeKey(err) == azureRepoNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Repository, 0, len(refs))
	for _, ref := range refs {
		r := repo
		r.Branch, r.SHA = strings.TrimPrefix(azureString(ref.Name), azureBranchPrefix), azureString(ref.ObjectId)
		out = append(out, r)
	}
	return out, nil
}

// refs reads one page of a repository's branch refs.
func (a *azureDevOps) refs(ctx context.Context, c git.Client, repo, token string) ([]git.GitRef, string, error) {
	filter, top := "heads/", pageSize
	args := git.GetRefsArgs{RepositoryId: &repo, Project: &a.project, Filter: &filter, Top: &top}
	if token != "" {
		args.ContinuationToken = &token
	}
	page, err := c.GetRefs(ctx, args)
	if err != nil {
		return nil, "", err
	}
	return page.Value, page.ContinuationToken, nil
}

// HasPath implements Provider through the item API: a file or a folder.
func (a *azureDevOps) HasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	c, err := a.git(ctx)
	if err != nil {
		return false, err
	}
	branch := git.GitVersionTypeValues.Branch
	_, err = c.GetItem(ctx, git.GetItemArgs{RepositoryId: &repo.Repository, Project: &a.project, Path: &path,
		VersionDescriptor: &git.GitVersionDescriptor{Version: &repo.Branch, VersionType: &branch}})
	switch {
	case err == nil:
		return true, nil
	case azureTypeKey(err) == azureItemNotFound:
		return false, nil
	}
	return false, fmt.Errorf("%s: reading %s on %s: %w", a.repoWhere(repo), path, repo.Branch, err)
}

// repoWhere names a repository of the project in errors.
func (a *azureDevOps) repoWhere(repo Repository) string {
	return fmt.Sprintf("%s repository %s/%s/%s", azureName, a.org, a.project, repo.Repository)
}

// azureString is *s, or "" for nil.
func azureString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
