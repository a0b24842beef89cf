// Package pullrequest lists the open pull (merge) requests of a
// repository for the ApplicationSet pull request generator, through each
// provider's own Go client library: GitHub (go-github), GitLab (GitLab's
// client-go), Gitea (Gitea's SDK), Bitbucket Server (go-bitbucket-v1),
// Bitbucket Cloud (go-bitbucket) and Azure DevOps (azure-devops-go-api). Listing pages through the provider's answers up to
// MaxPullRequests and a per-call timeout, so a provider answering without
// end cannot hold the controller.
package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// PullRequest is one open request.
type PullRequest struct {
	Number       int64
	Title        string
	Branch       string
	TargetBranch string
	HeadSHA      string
	Author       string
	Labels       []string
}

// Service lists a repository's open requests.
type Service interface {
	List(ctx context.Context) ([]PullRequest, error)
}

// MaxPullRequests bounds one listing: a provider with more is an error
// naming the bound, not a partial set of Applications (which would delete
// the others).
const MaxPullRequests = 5000

// pageSize is how many requests one call asks for.
const pageSize = 100

// DefaultTimeout bounds one API call of the default HTTP client.
const DefaultTimeout = 30 * time.Second

// ErrRepositoryNotFound is returned when the provider has no such
// repository (continueOnRepoNotFoundError skips it).
var ErrRepositoryNotFound = errors.New("repository not found")

// errTooMany is the listing bound reached.
func errTooMany(where string) error {
	return fmt.Errorf("%s has more than %d open pull requests; the generator stops there", where, MaxPullRequests)
}

// httpClient is opts' client, else one with DefaultTimeout.
func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: DefaultTimeout}
}

// Filtered lists svc's requests and keeps those any filter matches (all
// of a filter's patterns must match; no filters keep all).
func Filtered(ctx context.Context, svc Service, filters []v1alpha1.PullRequestGeneratorFilter) ([]PullRequest, error) {
	type compiled struct{ branch, target, title *regexp.Regexp }
	var fs []compiled
	for i, f := range filters {
		var c compiled
		for _, p := range []struct {
			expr *string
			into **regexp.Regexp
			name string
		}{{f.BranchMatch, &c.branch, "branchMatch"}, {f.TargetBranchMatch, &c.target, "targetBranchMatch"}, {f.TitleMatch, &c.title, "titleMatch"}} {
			if p.expr == nil {
				continue
			}
			re, err := regexp.Compile(*p.expr)
			if err != nil {
				return nil, fmt.Errorf("filters[%d].%s %q: %w", i, p.name, *p.expr, err)
			}
			*p.into = re
		}
		fs = append(fs, c)
	}
	prs, err := svc.List(ctx)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return prs, nil
	}
	var out []PullRequest
	for _, pr := range prs {
		for _, f := range fs {
			if (f.branch == nil || f.branch.MatchString(pr.Branch)) && (f.target == nil || f.target.MatchString(pr.TargetBranch)) &&
				(f.title == nil || f.title.MatchString(pr.Title)) {
				out = append(out, pr)
				break
			}
		}
	}
	return out, nil
}
