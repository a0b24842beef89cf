package pullrequest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// gitLab opens merge requests through GitLab's REST API.
type gitLab struct {
	client  *gitlab.Client
	project string
}

// newGitLab reaches the API of the repository's host (/api/v4/), unless
// api names another address; the project is the repository's path.
func newGitLab(api string, repoURL *url.URL, path string, opts Options) (*gitLab, error) {
	if !strings.Contains(path, "/") {
		return nil, fmt.Errorf("repository %s: a GitLab project's path is group/project", repoURL.Redacted())
	}
	base := apiBase(api, repoURL, "/api/v4/")
	c, err := gitlab.NewClient(opts.Token, gitlab.WithBaseURL(base), gitlab.WithHTTPClient(opts.HTTPClient), gitlab.WithoutRetries())
	if err != nil {
		return nil, fmt.Errorf("GitLab client for %s: %w", repoURL.Redacted(), err)
	}
	return &gitLab{client: c, project: path}, nil
}

// Ensure updates the open merge request from r.Head into r.Base, or opens
// one, with its labels.
func (g *gitLab) Ensure(ctx context.Context, r Request) (Result, error) {
	r = bounded(r)
	where := "GitLab project " + g.project
	open, _, err := g.client.MergeRequests.ListProjectMergeRequests(g.project, &gitlab.ListProjectMergeRequestsOptions{
		State: new("opened"), SourceBranch: &r.Head, TargetBranch: &r.Base,
	}, gitlab.WithContext(ctx))
	if err != nil {
		return Result{}, fmt.Errorf("%s: listing merge requests: %w", where, err)
	}
	var labels *gitlab.LabelOptions
	if len(r.Labels) > 0 {
		l := gitlab.LabelOptions(r.Labels)
		labels = &l
	}
	if len(open) > 0 && open[0].Title == r.Title && open[0].Description == r.Body && containsAll(open[0].Labels, r.Labels) {
		return Result{Number: open[0].IID, URL: open[0].WebURL}, nil // already says so
	}
	if len(open) > 0 {
		mr, _, err := g.client.MergeRequests.UpdateMergeRequest(g.project, open[0].IID, &gitlab.UpdateMergeRequestOptions{
			Title: &r.Title, Description: &r.Body, AddLabels: labels,
		}, gitlab.WithContext(ctx))
		if err != nil {
			return Result{}, fmt.Errorf("%s: updating merge request !%d: %w", where, open[0].IID, err)
		}
		return Result{Number: mr.IID, URL: mr.WebURL}, nil
	}
	mr, _, err := g.client.MergeRequests.CreateMergeRequest(g.project, &gitlab.CreateMergeRequestOptions{
		Title: &r.Title, Description: &r.Body, SourceBranch: &r.Head, TargetBranch: &r.Base, Labels: labels,
	}, gitlab.WithContext(ctx))
	if err != nil {
		return Result{}, fmt.Errorf("%s: opening a merge request from %s into %s: %w", where, r.Head, r.Base, err)
	}
	return Result{Number: mr.IID, URL: mr.WebURL, Created: true}, nil
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
