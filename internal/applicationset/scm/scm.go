// Package scm lists the repositories of an organization on a source code
// management service for the ApplicationSet SCM provider generator,
// through the provider's own Go client library (go-github for GitHub,
// GitLab's client-go for GitLab, Gitea's SDK for Gitea, go-bitbucket-v1
// for Bitbucket Server, go-bitbucket for Bitbucket Cloud, Microsoft's
// azure-devops-go-api for Azure DevOps, the AWS SDK for CodeCommit),
// and applies Argo CD's filters: repositoryMatch and labelMatch choose
// repositories, branchMatch, pathsExist and pathsDoNotExist their
// branches; a repository or branch passes when any one filter passes,
// with all of its conditions. Listings are bounded (MaxRepositories,
// MaxBranches) so a provider answering without end cannot hold the
// controller.
package scm

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Repository is one branch of one repository.
type Repository struct {
	Organization string
	Repository   string
	// URL is the clone URL of the protocol asked for.
	URL    string
	Branch string
	SHA    string
	// Labels are the repository's topics.
	Labels       []string
	RepositoryID int64
}

// Provider reads one organization.
type Provider interface {
	// Repositories lists the organization's repositories, each with its
	// default branch and the clone URL of protocol (ssh or https).
	Repositories(ctx context.Context, protocol string) ([]Repository, error)
	// Branches returns repo on each of its branches (all) or on its
	// default branch only, with the commit each points at.
	Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error)
	// HasPath reports whether a file or directory exists on repo's branch.
	HasPath(ctx context.Context, repo Repository, path string) (bool, error)
}

// Bounds of one listing.
const (
	MaxRepositories = 5000
	MaxBranches     = 1000
	pageSize        = 100
	// DefaultTimeout bounds one API call of the default HTTP client.
	DefaultTimeout = 30 * time.Second
)

func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: DefaultTimeout}
}

// filter is one compiled filter.
type filter struct {
	repo, label, branch *regexp.Regexp
	exist, notExist     []string
}

// A filter with a branch or path condition is checked on each branch
// (with all its conditions); one with only repository conditions on each
// repository, as Argo CD splits them.
func (f filter) choosesBranches() bool { return f.branch != nil || f.exist != nil || f.notExist != nil }
func (f filter) choosesRepos() bool    { return !f.choosesBranches() && (f.repo != nil || f.label != nil) }

func compile(filters []v1alpha1.SCMProviderGeneratorFilter) ([]filter, error) {
	var out []filter
	for i, f := range filters {
		c := filter{exist: f.PathsExist, notExist: f.PathsDoNotExist}
		for _, p := range []struct {
			expr *string
			into **regexp.Regexp
			name string
		}{{f.RepositoryMatch, &c.repo, "repositoryMatch"}, {f.LabelMatch, &c.label, "labelMatch"}, {f.BranchMatch, &c.branch, "branchMatch"}} {
			if p.expr == nil {
				continue
			}
			re, err := regexp.Compile(*p.expr)
			if err != nil {
				return nil, fmt.Errorf("filters[%d].%s %q: %w", i, p.name, *p.expr, err)
			}
			*p.into = re
		}
		out = append(out, c)
	}
	return out, nil
}

// match checks every condition of f on one repository branch.
func (f filter) match(ctx context.Context, p Provider, r Repository) (bool, error) {
	if f.repo != nil && !f.repo.MatchString(r.Repository) {
		return false, nil
	}
	if f.branch != nil && !f.branch.MatchString(r.Branch) {
		return false, nil
	}
	if f.label != nil && !slices.ContainsFunc(r.Labels, f.label.MatchString) {
		return false, nil
	}
	for _, path := range f.exist {
		if ok, err := p.HasPath(ctx, r, path); err != nil || !ok {
			return false, err
		}
	}
	for _, path := range f.notExist {
		if ok, err := p.HasPath(ctx, r, path); err != nil || ok {
			return false, err
		}
	}
	return true, nil
}

// keep returns the repositories any of filters passes (all when none
// applies).
func keep(ctx context.Context, p Provider, repos []Repository, filters []filter) ([]Repository, error) {
	if len(filters) == 0 {
		return repos, nil
	}
	var out []Repository
	for _, r := range repos {
		for _, f := range filters {
			ok, err := f.match(ctx, p, r)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

// List lists the organization's repositories on their default branch (or
// every branch with allBranches) that the filters keep, as Argo CD does:
// repository filters first, then branch filters on each branch.
func List(ctx context.Context, p Provider, filters []v1alpha1.SCMProviderGeneratorFilter, protocol string, allBranches bool) ([]Repository, error) {
	compiled, err := compile(filters)
	if err != nil {
		return nil, err
	}
	repos, err := p.Repositories(ctx, protocol)
	if err != nil {
		return nil, err
	}
	repos, err = keep(ctx, p, repos, slices.DeleteFunc(slices.Clone(compiled), func(f filter) bool { return !f.choosesRepos() }))
	if err != nil {
		return nil, err
	}
	var branches []Repository
	for _, r := range repos {
		bs, err := p.Branches(ctx, r, allBranches)
		if err != nil {
			return nil, err
		}
		branches = append(branches, bs...)
	}
	return keep(ctx, p, branches, slices.DeleteFunc(slices.Clone(compiled), func(f filter) bool { return !f.choosesBranches() }))
}
