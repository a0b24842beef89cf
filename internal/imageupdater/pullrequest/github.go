package pullrequest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/google/go-github/v88/github"
)

// gitHub opens pull requests through GitHub's REST API.
type gitHub struct {
	client      *github.Client
	owner, repo string
}

// newGitHub reaches api.github.com for github.com, else the GitHub
// Enterprise API of the repository's host (/api/v3/), unless api names
// another address.
func newGitHub(api string, repoURL *url.URL, path string, opts Options) (*gitHub, error) {
	owner, repo, ok := strings.Cut(path, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("repository %s: a GitHub repository's path is owner/repository", repoURL.Redacted())
	}
	options := []github.ClientOptionsFunc{github.WithHTTPClient(opts.HTTPClient), github.WithAuthToken(opts.Token)}
	if api != "" || repoURL.Host != "github.com" {
		base := apiBase(api, repoURL, "/api/v3/")
		options = append(options, github.WithURLs(&base, &base))
	}
	c, err := github.NewClient(options...)
	if err != nil {
		return nil, fmt.Errorf("GitHub client for %s: %w", repoURL.Redacted(), err)
	}
	return &gitHub{client: c, owner: owner, repo: repo}, nil
}

// Ensure updates the open pull request from r.Head into r.Base, or opens
// one, and sets its labels.
func (g *gitHub) Ensure(ctx context.Context, r Request) (Result, error) {
	r = bounded(r)
	where := fmt.Sprintf("GitHub repository %s/%s", g.owner, g.repo)
	open, _, err := g.client.PullRequests.List(ctx, g.owner, g.repo, &github.PullRequestListOptions{
		State: "open", Head: g.owner + ":" + r.Head, Base: r.Base,
	})
	if err != nil {
		return Result{}, fmt.Errorf("%s: listing pull requests: %w", where, err)
	}
	var pr *github.PullRequest
	res := Result{}
	switch {
	case len(open) > 0 && open[0].GetTitle() == r.Title && open[0].GetBody() == r.Body:
		pr = open[0] // already says so
	case len(open) > 0:
		pr, _, err = g.client.PullRequests.Edit(ctx, g.owner, g.repo, open[0].GetNumber(), &github.PullRequest{Title: &r.Title, Body: &r.Body})
		if err != nil {
			return Result{}, fmt.Errorf("%s: updating pull request #%d: %w", where, open[0].GetNumber(), err)
		}
	default:
		pr, _, err = g.client.PullRequests.Create(ctx, g.owner, g.repo, &github.NewPullRequest{Title: &r.Title, Head: &r.Head, Base: &r.Base, Body: &r.Body})
		if err != nil {
			return Result{}, fmt.Errorf("%s: opening a pull request from %s into %s: %w", where, r.Head, r.Base, err)
		}
		res.Created = true
	}
	res.Number, res.URL = int64(pr.GetNumber()), pr.GetHTMLURL()
	if missingLabels(r.Labels, pr.Labels) {
		if _, _, err := g.client.Issues.AddLabelsToIssue(ctx, g.owner, g.repo, pr.GetNumber(), r.Labels); err != nil {
			return res, fmt.Errorf("%s: labelling pull request #%d: %w", where, pr.GetNumber(), err)
		}
	}
	return res, nil
}

// missingLabels reports whether any wanted label is not on the request.
func missingLabels(want []string, have []*github.Label) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(l *github.Label) bool { return l.GetName() == w }) {
			return true
		}
	}
	return false
}
