package scm

import (
	"context"
	"fmt"
	"net/http"

	"code.gitea.io/sdk/gitea"
)

// giteaOrg reads a Gitea organization (or user).
type giteaOrg struct {
	client          *gitea.Client
	owner           string
	excludeArchived bool
}

// Gitea returns the Provider of owner on the Gitea server at api; token
// may be empty. Repository labels are the repository's issue labels, as
// Argo CD reads them.
func Gitea(api, owner, token string, excludeArchived bool, hc *http.Client) (Provider, error) {
	c, err := gitea.NewClient(api, gitea.SetHTTPClient(httpClient(hc)), gitea.SetToken(token), gitea.SetGiteaVersion(""))
	if err != nil {
		return nil, fmt.Errorf("Gitea client for %s: %w", owner, err)
	}
	return &giteaOrg{client: c, owner: owner, excludeArchived: excludeArchived}, nil
}

// Repositories implements Provider.
func (g *giteaOrg) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	g.client.SetContext(ctx)
	where := "Gitea organization " + g.owner
	repos, err := pages(MaxRepositories, where+" repositories", func(page int) ([]*gitea.Repository, int, error) {
		rs, resp, err := g.client.ListOrgRepos(g.owner, gitea.ListOrgReposOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: listing repositories: %w", where, err)
		}
		return rs, resp.NextPage, nil
	})
	if err != nil {
		return nil, err
	}
	var out []Repository
	for _, r := range repos {
		if g.excludeArchived && r.Archived {
			continue
		}
		url, err := cloneURL(protocol, r.SSHURL, r.CloneURL)
		if err != nil {
			return nil, err
		}
		labels, err := g.labels(r.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, Repository{Organization: g.owner, Repository: r.Name, URL: url, Branch: r.DefaultBranch,
			Labels: labels, RepositoryID: r.ID})
	}
	return out, nil
}

// labels lists a repository's label names.
func (g *giteaOrg) labels(repo string) ([]string, error) {
	where := fmt.Sprintf("Gitea repository %s/%s", g.owner, repo)
	ls, err := pages(MaxBranches, where+" labels", func(page int) ([]*gitea.Label, int, error) {
		ls, resp, err := g.client.ListRepoLabels(g.owner, repo, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: listing labels: %w", where, err)
		}
		return ls, resp.NextPage, nil
	})
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		names = append(names, l.Name)
	}
	return names, err
}

// Branches implements Provider.
func (g *giteaOrg) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	g.client.SetContext(ctx)
	where := fmt.Sprintf("Gitea repository %s/%s", g.owner, repo.Repository)
	if !all {
		b, _, err := g.client.GetRepoBranch(g.owner, repo.Repository, repo.Branch)
		if err != nil {
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, repo.Branch, err)
		}
		repo.SHA = commitID(b)
		return []Repository{repo}, nil
	}
	branches, err := pages(MaxBranches, where+" branches", func(page int) ([]*gitea.Branch, int, error) {
		bs, resp, err := g.client.ListRepoBranches(g.owner, repo.Repository, gitea.ListRepoBranchesOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: listing branches: %w", where, err)
		}
		return bs, resp.NextPage, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Repository, 0, len(branches))
	for _, b := range branches {
		r := repo
		r.Branch, r.SHA = b.Name, commitID(b)
		out = append(out, r)
	}
	return out, nil
}

func commitID(b *gitea.Branch) string {
	if b.Commit == nil {
		return ""
	}
	return b.Commit.ID
}

// HasPath implements Provider: a file or a directory.
func (g *giteaOrg) HasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	g.client.SetContext(ctx)
	_, resp, err := g.client.ListContents(g.owner, repo.Repository, repo.Branch, path)
	switch {
	case resp != nil && resp.StatusCode == http.StatusNotFound:
		return false, nil
	case err == nil:
		return true, nil
	}
	// A file answers as one object, not the list a directory gives.
	if _, _, ferr := g.client.GetContents(g.owner, repo.Repository, repo.Branch, path); ferr == nil {
		return true, nil
	}
	return false, fmt.Errorf("Gitea repository %s/%s: reading %s on %s: %w", g.owner, repo.Repository, path, repo.Branch, err)
}
