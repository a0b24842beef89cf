package scm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v88/github"
)

// gitHub reads a GitHub organization.
type gitHub struct {
	client          *github.Client
	org             string
	excludeArchived bool
}

// GitHub returns the Provider of organization org; api is GitHub
// Enterprise's address (empty: api.github.com), token may be empty.
func GitHub(api, org, token string, excludeArchived bool, hc *http.Client) (Provider, error) {
	opts := []github.ClientOptionsFunc{github.WithHTTPClient(httpClient(hc))}
	if token != "" {
		opts = append(opts, github.WithAuthToken(token))
	}
	if api != "" {
		base := strings.TrimSuffix(api, "/") + "/"
		opts = append(opts, github.WithURLs(&base, &base))
	}
	c, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("GitHub client for %s: %w", org, err)
	}
	return &gitHub{client: c, org: org, excludeArchived: excludeArchived}, nil
}

// Repositories implements Provider.
func (g *gitHub) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	opts := &github.RepositoryListByOrgOptions{ListOptions: github.ListOptions{PerPage: pageSize}}
	var out []Repository
	for {
		repos, resp, err := g.client.Repositories.ListByOrg(ctx, g.org, opts)
		if err != nil {
			return nil, fmt.Errorf("GitHub organization %s: listing repositories: %w", g.org, err)
		}
		for _, r := range repos {
			if g.excludeArchived && r.GetArchived() {
				continue
			}
			url, err := cloneURL(protocol, r.GetSSHURL(), r.GetCloneURL())
			if err != nil {
				return nil, err
			}
			out = append(out, Repository{Organization: g.org, Repository: r.GetName(), URL: url, Branch: r.GetDefaultBranch(),
				Labels: r.Topics, RepositoryID: r.GetID()})
		}
		if len(out) > MaxRepositories {
			return nil, fmt.Errorf("GitHub organization %s has more than %d repositories; the generator stops there", g.org, MaxRepositories)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Branches implements Provider.
func (g *gitHub) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	where := fmt.Sprintf("GitHub repository %s/%s", g.org, repo.Repository)
	if !all {
		b, _, err := g.client.Repositories.GetBranch(ctx, g.org, repo.Repository, repo.Branch, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, repo.Branch, err)
		}
		repo.SHA = b.GetCommit().GetSHA()
		return []Repository{repo}, nil
	}
	opts := &github.BranchListOptions{ListOptions: github.ListOptions{PerPage: pageSize}}
	var out []Repository
	for {
		branches, resp, err := g.client.Repositories.ListBranches(ctx, g.org, repo.Repository, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: listing branches: %w", where, err)
		}
		for _, b := range branches {
			r := repo
			r.Branch, r.SHA = b.GetName(), b.GetCommit().GetSHA()
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

// HasPath implements Provider.
func (g *gitHub) HasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	_, _, _, err := g.client.Repositories.GetContents(ctx, g.org, repo.Repository, path, &github.RepositoryContentGetOptions{Ref: repo.Branch})
	var gerr *github.ErrorResponse
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("GitHub repository %s/%s: reading %s on %s: %w", g.org, repo.Repository, path, repo.Branch, err)
}

// cloneURL picks the clone URL of a protocol: ssh (the default) or https.
func cloneURL(protocol, ssh, https string) (string, error) {
	switch protocol {
	case "", "ssh":
		return ssh, nil
	case "https":
		return https, nil
	}
	return "", fmt.Errorf("cloneProtocol %q: want ssh or https", protocol)
}
