package pullrequest

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	bitbucketv1 "github.com/gfleury/go-bitbucket-v1"
)

// bitbucketServerRepo lists a Bitbucket Server (Data Center) repository's
// open pull requests through its REST API 1.0.
type bitbucketServerRepo struct {
	cfg           *bitbucketv1.Configuration
	auth          Auth
	project, repo string
}

// BitbucketServer returns the Service of repository repo (its slug) of
// project (its key) on the Bitbucket Server at api, its address ("/rest"
// is added when missing). Labels are empty: Bitbucket Server has none.
func BitbucketServer(api, project, repo string, auth Auth, hc *http.Client) (Service, error) {
	if api == "" {
		return nil, fmt.Errorf("%s: no API address", "Bitbucket Server repository "+project+"/"+repo)
	}
	base := strings.TrimSuffix(api, "/")
	if !strings.HasSuffix(base, "/rest") {
		base += "/rest"
	}
	cfg := bitbucketv1.NewConfiguration(base)
	cfg.HTTPClient = httpClient(hc)
	// What Bitbucket's XSRF check asks of calls that change state.
	cfg.AddDefaultHeader("X-Atlassian-Token", "no-check")
	cfg.AddDefaultHeader("X-Requested-With", "XMLHttpRequest")
	return &bitbucketServerRepo{cfg: cfg, auth: auth, project: project, repo: repo}, nil
}

// client is the API for calls on behalf of ctx: the library takes the
// context, with the credentials in it, when the client is made.
func (b *bitbucketServerRepo) client(ctx context.Context) *bitbucketv1.DefaultApiService {
	switch {
	case b.auth.BearerToken != "":
		ctx = context.WithValue(ctx, bitbucketv1.ContextAccessToken, b.auth.BearerToken)
	case b.auth.basic():
		ctx = context.WithValue(ctx, bitbucketv1.ContextBasicAuth, bitbucketv1.BasicAuth{UserName: b.auth.Username, Password: b.auth.Password})
	}
	return bitbucketv1.NewAPIClient(ctx, b.cfg).DefaultApi
}

// List implements Service: the open requests, page by page (by offset,
// up to the answer's last page).
func (b *bitbucketServerRepo) List(ctx context.Context) ([]PullRequest, error) {
	where := fmt.Sprintf("Bitbucket Server repository %s/%s", b.project, b.repo)
	api := b.client(ctx)
	opts := map[string]any{"limit": pageSize, "state": "OPEN", "start": 0}
	var out []PullRequest
	for {
		resp, err := api.GetPullRequestsPage(b.project, b.repo, opts)
		if err != nil {
			if resp != nil && resp.Response != nil && resp.StatusCode == http.StatusNotFound {
				return nil, fmt.Errorf("%s: %w", where, ErrRepositoryNotFound)
			}
			return nil, fmt.Errorf("%s: listing pull requests: %w", where, err)
		}
		pulls, err := bitbucketv1.GetPullRequestsResponse(resp)
		if err != nil {
			return nil, fmt.Errorf("%s: reading pull requests: %w", where, err)
		}
		for _, p := range pulls {
			out = append(out, serverPull(p))
		}
		if len(out) > MaxPullRequests {
			return nil, errTooMany(where)
		}
		more, start := bitbucketv1.HasNextPage(resp)
		if !more || len(pulls) == 0 || start == opts["start"] {
			return out, nil
		}
		opts["start"] = start
	}
}

// serverPull is a Bitbucket Server request's parameters, as Argo CD reads
// them: the source and target branches' display names, the source's
// latest commit, the author's user name.
func serverPull(p bitbucketv1.PullRequest) PullRequest {
	author := ""
	if p.Author != nil {
		author = p.Author.User.Name
	}
	return PullRequest{Number: int64(p.ID), Title: p.Title, Branch: p.FromRef.DisplayID, TargetBranch: p.ToRef.DisplayID,
		HeadSHA: p.FromRef.LatestCommit, Author: author, Labels: []string{}}
}
