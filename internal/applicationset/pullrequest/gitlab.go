package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// gitLab lists a GitLab project's merge requests.
type gitLab struct {
	client  *gitlab.Client
	project string
	labels  []string
	state   string
}

// GitLab returns the Service of a project (group/name or its ID); api is
// the instance's address (empty: gitlab.com), state the requests' state
// (empty: opened), labels those a request must all carry.
func GitLab(api, project, token string, labels []string, state string, hc *http.Client) (Service, error) {
	opts := []gitlab.ClientOptionFunc{gitlab.WithHTTPClient(httpClient(hc)), gitlab.WithoutRetries()}
	if api != "" {
		opts = append(opts, gitlab.WithBaseURL(api))
	}
	c, err := gitlab.NewClient(token, opts...)
	if err != nil {
		return nil, fmt.Errorf("GitLab client for %s: %w", project, err)
	}
	if state == "" {
		state = "opened"
	}
	return &gitLab{client: c, project: project, labels: labels, state: state}, nil
}

// List implements Service.
func (g *gitLab) List(ctx context.Context) ([]PullRequest, error) {
	where := "GitLab project " + g.project
	opts := &gitlab.ListProjectMergeRequestsOptions{State: &g.state, ListOptions: gitlab.ListOptions{PerPage: pageSize}}
	if len(g.labels) > 0 {
		l := gitlab.LabelOptions(g.labels)
		opts.Labels = &l
	}
	var out []PullRequest
	for {
		mrs, resp, err := g.client.MergeRequests.ListProjectMergeRequests(g.project, opts, gitlab.WithContext(ctx))
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusNotFound || errors.Is(err, gitlab.ErrNotFound) {
				return nil, fmt.Errorf("%s: %w", where, ErrRepositoryNotFound)
			}
			return nil, fmt.Errorf("%s: listing merge requests: %w", where, err)
		}
		for _, mr := range mrs {
			author := ""
			if mr.Author != nil {
				author = mr.Author.Username
			}
			out = append(out, PullRequest{Number: mr.IID, Title: mr.Title, Branch: mr.SourceBranch, TargetBranch: mr.TargetBranch,
				HeadSHA: mr.SHA, Author: author, Labels: mr.Labels})
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
