package scm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ktrysmt/go-bitbucket"
)

// cloudAPI is Bitbucket Cloud's API address.
const cloudAPI = "https://api.bitbucket.org/2.0"

// bitbucketCloud reads a Bitbucket Cloud workspace through its REST API
// 2.0. The library makes its requests without a context, so ctx is
// checked before each call; the HTTP client's timeout bounds each one.
type bitbucketCloud struct {
	client      *bitbucket.Client
	owner       string
	allBranches bool
}

// BitbucketCloud returns the Provider of workspace owner; api is the
// API's address (empty: Bitbucket Cloud's). allBranches lists every
// branch of each repository, as List's all does. Repository labels are
// empty (Bitbucket has none) and RepositoryID 0 (Bitbucket Cloud names
// repositories by UUID).
func BitbucketCloud(api, owner string, auth Auth, allBranches bool, hc *http.Client) (Provider, error) {
	c, err := cloudClient(api, auth, hc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", "Bitbucket Cloud client for "+owner, err)
	}
	c.DisableAutoPaging = true
	return &bitbucketCloud{client: c, owner: owner, allBranches: allBranches}, nil
}

// cloudClient is a library client logged in with auth that calls the API
// at api (empty: Bitbucket Cloud's) through hc, asking pageSize items a
// page.
func cloudClient(api string, auth Auth, hc *http.Client) (*bitbucket.Client, error) {
	base, err := url.Parse(strings.TrimSuffix(cmp.Or(api, cloudAPI), "/"))
	if err != nil {
		return nil, fmt.Errorf("API address: %w", err)
	}
	if base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("API address %q: want an absolute URL", api)
	}
	var c *bitbucket.Client
	if auth.basic() {
		c, err = bitbucket.NewBasicAuth(auth.Username, auth.Password)
	} else {
		c, err = bitbucket.NewOAuthbearerToken(auth.BearerToken)
	}
	if err != nil {
		return nil, err
	}
	c.SetApiBaseURL(*base)
	c.HttpClient = httpClient(hc)
	c.Pagelen = pageSize
	return c, nil
}

// where names a repository of the workspace in errors.
func (b *bitbucketCloud) where(repo string) string {
	return fmt.Sprintf("Bitbucket Cloud repository %s/%s", b.owner, repo)
}

// Repositories implements Provider: the repositories the user is a member
// of, the repository parameter being the slug, as in Argo CD. A
// repository without a main branch (an empty one) is left out.
func (b *bitbucketCloud) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	where := "Bitbucket Cloud workspace " + b.owner
	repos, err := pages(MaxRepositories, where+" repositories", func(page int) ([]bitbucket.Repository, int, error) {
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("%s: listing repositories: %w", where, err)
		}
		res, err := b.client.Repositories.ListForAccount(&bitbucket.RepositoriesOptions{Owner: b.owner, Role: "member", Page: &page})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: listing repositories: %w", where, err)
		}
		return res.Items, nextPage(len(res.Items), int(res.Pagelen), int(res.Size), page), nil
	})
	if err != nil {
		return nil, err
	}
	var out []Repository
	for _, r := range repos {
		if r.Mainbranch.Name == "" {
			continue
		}
		links := cloudCloneLinks(r)
		clone, err := cloneURL(protocol, links["ssh"], links["https"])
		if err != nil {
			return nil, err
		}
		if clone == "" {
			return nil, fmt.Errorf("%s: no %s clone link", b.where(r.Slug), cmp.Or(protocol, "ssh"))
		}
		out = append(out, Repository{Organization: b.owner, Repository: r.Slug, URL: clone, Branch: r.Mainbranch.Name, Labels: []string{}})
	}
	return out, nil
}

// nextPage is the page after page when it came back full (n items of
// pagelen) and, when the answer gives the listing's size, short of it;
// else 0. The library does not hand back a listing's next link.
func nextPage(n, pagelen, size, page int) int {
	if n == 0 || n < pagelen || size > 0 && page*pagelen >= size {
		return 0
	}
	return page + 1
}

// cloudCloneLinks maps a repository's clone link names (https, ssh) to
// their addresses.
func cloudCloneLinks(r bitbucket.Repository) map[string]string {
	out := map[string]string{}
	links, _ := r.Links["clone"].([]any)
	for _, l := range links {
		m, _ := l.(map[string]any)
		name, _ := m["name"].(string)
		href, _ := m["href"].(string)
		out[name] = href
	}
	return out
}

// Branches implements Provider: every branch with all or the provider's
// allBranches, else the main branch.
func (b *bitbucketCloud) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	where := b.where(repo.Repository)
	var branches []bitbucket.RepositoryBranch
	if all || b.allBranches {
		var err error
		branches, err = pages(MaxBranches, where+" branches", func(page int) ([]bitbucket.RepositoryBranch, int, error) {
			return b.branchPage(ctx, where, repo.Repository, page)
		})
		if err != nil {
			return nil, err
		}
	} else {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, repo.Branch, err)
		}
		br, err := b.client.Repositories.Repository.GetBranch(&bitbucket.RepositoryBranchOptions{Owner: b.owner, RepoSlug: repo.Repository, BranchName: repo.Branch})
		if err != nil {
			return nil, fmt.Errorf("%s: reading branch %s: %w", where, repo.Branch, err)
		}
		branches = append(branches, *br)
	}
	out := make([]Repository, 0, len(branches))
	for _, br := range branches {
		hash, _ := br.Target["hash"].(string)
		if hash == "" {
			return nil, fmt.Errorf("%s: branch %s has no commit hash", where, br.Name)
		}
		r := repo
		r.Branch, r.SHA = br.Name, hash
		out = append(out, r)
	}
	return out, nil
}

// branchPage lists one page of a repository's branches and the next
// page's number (0 after the last).
func (b *bitbucketCloud) branchPage(ctx context.Context, where, slug string, page int) ([]bitbucket.RepositoryBranch, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: listing branches: %w", where, err)
	}
	res, err := b.client.Repositories.Repository.ListBranches(&bitbucket.RepositoryBranchOptions{Owner: b.owner, RepoSlug: slug, PageNum: page, Pagelen: pageSize})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: listing branches: %w", where, err)
	}
	if res.Next == "" || len(res.Branches) == 0 {
		return res.Branches, 0, nil
	}
	return res.Branches, page + 1, nil
}

// HasPath implements Provider: the source at the branch's commit (the
// branch when the commit is not known) is a file or a directory listing,
// or 404.
func (b *bitbucketCloud) HasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	ref := cmp.Or(repo.SHA, repo.Branch)
	where := b.where(repo.Repository)
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("%s: reading %s on %s: %w", where, path, repo.Branch, err)
	}
	_, err := b.client.Repositories.Repository.GetFileContent(&bitbucket.RepositoryFilesOptions{Owner: b.owner, RepoSlug: repo.Repository,
		Ref: ref, Path: strings.Trim(path, "/")})
	var status *bitbucket.UnexpectedResponseStatusError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &status) && status.StatusCode == http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("%s: reading %s on %s: %w", where, path, repo.Branch, err)
}
