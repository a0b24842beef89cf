package scm

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"

	"github.com/capstan-cd/capstan/internal/applicationset/azuredevopsgit"
)

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
	conn         *azuredevopsgit.Conn
	org, project string
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
	return &azureDevOps{conn: azuredevopsgit.New(api, organization, token, httpClient(hc)), org: organization, project: project}, nil
}

// where names the team project in errors.
func (a *azureDevOps) where() string {
	return fmt.Sprintf("%s project %s/%s", azureName, a.org, a.project)
}

// git returns the git client, finding the organization's git service
// on the first call.
func (a *azureDevOps) git(ctx context.Context) (git.Client, error) {
	c, err := a.conn.Git(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: finding the git service: %w", a.where(), err)
	}
	return c, nil
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
		case azuredevopsgit.TypeKey(err) == azureRepoNotFound:
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
	if azuredevopsgit.TypeKey(err) == azureRepoNotFound {
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
	case azuredevopsgit.TypeKey(err) == azureItemNotFound:
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
