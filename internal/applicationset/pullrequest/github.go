package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v88/github"
)

// gitHub lists a GitHub repository's open pull requests.
type gitHub struct {
	client      *github.Client
	owner, repo string
	labels      []string
}

// GitHub returns the Service of owner/repo; api is GitHub Enterprise's
// address (empty: api.github.com), token may be empty (anonymous),
// labels are those a request must all carry.
func GitHub(api, owner, repo, token string, labels []string, hc *http.Client) (Service, error) {
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
		return nil, fmt.Errorf("GitHub client for %s/%s: %w", owner, repo, err)
	}
	return &gitHub{client: c, owner: owner, repo: repo, labels: labels}, nil
}

// List implements Service.
func (g *gitHub) List(ctx context.Context) ([]PullRequest, error) {
	where := fmt.Sprintf("GitHub repository %s/%s", g.owner, g.repo)
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: pageSize}}
	var out []PullRequest
	for {
		pulls, resp, err := g.client.PullRequests.List(ctx, g.owner, g.repo, opts)
		if err != nil {
			var gerr *github.ErrorResponse
			if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusNotFound {
				return nil, fmt.Errorf("%s: %w", where, ErrRepositoryNotFound)
			}
			return nil, fmt.Errorf("%s: listing pull requests: %w", where, err)
		}
		for _, p := range pulls {
			var labels []string
			for _, l := range p.Labels {
				labels = append(labels, l.GetName())
			}
			if !hasAll(labels, g.labels) {
				continue
			}
			out = append(out, PullRequest{Number: int64(p.GetNumber()), Title: p.GetTitle(), Branch: p.GetHead().GetRef(),
				TargetBranch: p.GetBase().GetRef(), HeadSHA: p.GetHead().GetSHA(), Author: p.GetUser().GetLogin(), Labels: labels})
		}
		if len(out) > MaxPullRequests {
			return nil, errTooMany(where)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
