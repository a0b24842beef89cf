package pullrequest

import (
	"context"
	"fmt"
	"net/http"

	"code.gitea.io/sdk/gitea"
)

// giteaRepo lists a Gitea repository's open pull requests.
type giteaRepo struct {
	client      *gitea.Client
	owner, repo string
	labels      []string
}

// Gitea returns the Service of owner/repo on the Gitea server at api;
// token may be empty, labels are those a request must all carry.
func Gitea(api, owner, repo, token string, labels []string, hc *http.Client) (Service, error) {
	c, err := gitea.NewClient(api, gitea.SetHTTPClient(httpClient(hc)), gitea.SetToken(token), gitea.SetGiteaVersion(""))
	if err != nil {
		return nil, fmt.Errorf("Gitea client for %s/%s: %w", owner, repo, err)
	}
	return &giteaRepo{client: c, owner: owner, repo: repo, labels: labels}, nil
}

// List implements Service.
func (g *giteaRepo) List(ctx context.Context) ([]PullRequest, error) {
	g.client.SetContext(ctx)
	where := fmt.Sprintf("Gitea repository %s/%s", g.owner, g.repo)
	var out []PullRequest
	for page := 1; ; {
		pulls, resp, err := g.client.ListRepoPullRequests(g.owner, g.repo, gitea.ListPullRequestsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize}, State: gitea.StateOpen})
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusNotFound {
				return nil, fmt.Errorf("%s: %w", where, ErrRepositoryNotFound)
			}
			return nil, fmt.Errorf("%s: listing pull requests: %w", where, err)
		}
		for _, p := range pulls {
			var labels []string
			for _, l := range p.Labels {
				labels = append(labels, l.Name)
			}
			if !hasAll(labels, g.labels) || p.Head == nil || p.Base == nil {
				continue
			}
			author := ""
			if p.Poster != nil {
				author = p.Poster.UserName
			}
			out = append(out, PullRequest{Number: p.Index, Title: p.Title, Branch: p.Head.Ref, TargetBranch: p.Base.Ref,
				HeadSHA: p.Head.Sha, Author: author, Labels: labels})
		}
		if len(out) > MaxPullRequests {
			return nil, errTooMany(where)
		}
		if resp.NextPage == 0 || resp.NextPage == page {
			return out, nil
		}
		page = resp.NextPage
	}
}
