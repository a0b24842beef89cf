package scm

import (
	"context"
	"fmt"
	"net/http"
	"path"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// gitLab reads a GitLab group.
type gitLab struct {
	client *gitlab.Client
	group  string
	opts   GitLabOptions
}

// GitLabOptions are the GitLab generator's choices of projects.
type GitLabOptions struct {
	IncludeSubgroups bool
	// IncludeSharedProjects lists projects shared with the group too.
	// Default true, as in Argo CD.
	IncludeSharedProjects *bool
	// Topic keeps projects with this topic.
	Topic string
	// IncludeArchived lists archived projects too.
	IncludeArchived bool
}

// GitLab returns the Provider of a group; api is the instance's address
// (empty: gitlab.com).
func GitLab(api, group, token string, opts GitLabOptions, hc *http.Client) (Provider, error) {
	copts := []gitlab.ClientOptionFunc{gitlab.WithHTTPClient(httpClient(hc)), gitlab.WithoutRetries()}
	if api != "" {
		copts = append(copts, gitlab.WithBaseURL(api))
	}
	c, err := gitlab.NewClient(token, copts...)
	if err != nil {
		return nil, fmt.Errorf("GitLab client for %s: %w", group, err)
	}
	return &gitLab{client: c, group: group, opts: opts}, nil
}

// Repositories implements Provider.
func (g *gitLab) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	shared := g.opts.IncludeSharedProjects == nil || *g.opts.IncludeSharedProjects
	opts := &gitlab.ListGroupProjectsOptions{ListOptions: gitlab.ListOptions{PerPage: pageSize},
		IncludeSubGroups: &g.opts.IncludeSubgroups, WithShared: &shared}
	if g.opts.Topic != "" {
		opts.Topic = &g.opts.Topic
	}
	if !g.opts.IncludeArchived {
		no := false
		opts.Archived = &no
	}
	var out []Repository
	for {
		projects, resp, err := g.client.Groups.ListGroupProjects(g.group, opts, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("GitLab group %s: listing projects: %w", g.group, err)
		}
		for _, p := range projects {
			url, err := cloneURL(protocol, p.SSHURLToRepo, p.HTTPURLToRepo)
			if err != nil {
				return nil, err
			}
			org := g.group
			if p.Namespace != nil {
				org = p.Namespace.FullPath
			}
			out = append(out, Repository{Organization: org, Repository: p.Path, URL: url, Branch: p.DefaultBranch, Labels: p.Topics, RepositoryID: p.ID})
		}
		if len(out) > MaxRepositories {
			return nil, fmt.Errorf("GitLab group %s has more than %d projects; the generator stops there", g.group, MaxRepositories)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Branches implements Provider.
func (g *gitLab) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	where := fmt.Sprintf("GitLab project %s/%s", repo.Organization, repo.Repository)
	if !all {
		b, _, err := g.client.Branches.GetBranch(repo.RepositoryID, repo.Branch, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, repo.Branch, err)
		}
		if b.Commit != nil {
			repo.SHA = b.Commit.ID
		}
		return []Repository{repo}, nil
	}
	opts := &gitlab.ListBranchesOptions{ListOptions: gitlab.ListOptions{PerPage: pageSize}}
	var out []Repository
	for {
		branches, resp, err := g.client.Branches.ListBranches(repo.RepositoryID, opts, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("%s: listing branches: %w", where, err)
		}
		for _, b := range branches {
			r := repo
			r.Branch = b.Name
			if b.Commit != nil {
				r.SHA = b.Commit.ID
			}
			out = append(out, r)
		}
		if len(out) > MaxBranches {
			return nil, fmt.Errorf("%s has more than %d branches; the generator stops there", where, MaxBranches)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// HasPath implements Provider: the path's directory is listed on the
// branch and the path looked for in it.
func (g *gitLab) HasPath(ctx context.Context, repo Repository, p string) (bool, error) {
	p = path.Clean("/" + p)[1:]
	dir := path.Dir(p)
	if dir == "." {
		dir = ""
	}
	opts := &gitlab.ListTreeOptions{Path: &dir, Ref: &repo.Branch, ListOptions: gitlab.ListOptions{PerPage: pageSize}}
	for pages := 0; pages < MaxBranches/pageSize; pages++ {
		nodes, resp, err := g.client.Repositories.ListTree(repo.RepositoryID, opts, gitlab.WithContext(ctx))
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("GitLab project %s/%s: listing %s on %s: %w", repo.Organization, repo.Repository, dir, repo.Branch, err)
		}
		for _, n := range nodes {
			if n.Path == p {
				return true, nil
			}
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
	return false, nil
}
