package scm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	bitbucketv1 "github.com/gfleury/go-bitbucket-v1"
)

// bitbucketServer reads a Bitbucket Server (Data Center) project through
// its REST API 1.0.
type bitbucketServer struct {
	cfg         *bitbucketv1.Configuration
	auth        Auth
	project     string
	allBranches bool

	mu sync.Mutex
	// slugs holds each listed repository's slug by its ID: the API names
	// a repository by slug, the repository parameter by name.
	slugs map[int64]string
}

// BitbucketServer returns the Provider of project (its key) on the
// Bitbucket Server at api, its address ("/rest" is added when missing).
// allBranches lists every branch of each repository, as List's all does.
// Repository labels are empty: Bitbucket Server has none.
func BitbucketServer(api, project string, auth Auth, allBranches bool, hc *http.Client) (Provider, error) {
	if api == "" {
		return nil, fmt.Errorf("%s: no API address", "Bitbucket Server project "+project)
	}
	cfg := bitbucketv1.NewConfiguration(serverBase(api))
	cfg.HTTPClient = httpClient(hc)
	// What Bitbucket's XSRF check asks of calls that change state.
	cfg.AddDefaultHeader("X-Atlassian-Token", "no-check")
	cfg.AddDefaultHeader("X-Requested-With", "XMLHttpRequest")
	return &bitbucketServer{cfg: cfg, auth: auth, project: project, allBranches: allBranches, slugs: map[int64]string{}}, nil
}

// serverBase is api ending in "/rest", where the library adds "/api/1.0".
func serverBase(api string) string {
	base := strings.TrimSuffix(api, "/")
	if !strings.HasSuffix(base, "/rest") {
		base += "/rest"
	}
	return base
}

// client is the API for calls on behalf of ctx: the library takes the
// context, with the credentials in it, when the client is made.
func (b *bitbucketServer) client(ctx context.Context) *bitbucketv1.DefaultApiService {
	switch {
	case b.auth.BearerToken != "":
		ctx = context.WithValue(ctx, bitbucketv1.ContextAccessToken, b.auth.BearerToken)
	case b.auth.basic():
		ctx = context.WithValue(ctx, bitbucketv1.ContextBasicAuth, bitbucketv1.BasicAuth{UserName: b.auth.Username, Password: b.auth.Password})
	}
	return bitbucketv1.NewAPIClient(ctx, b.cfg).DefaultApi
}

// where names a repository of the project in errors.
func (b *bitbucketServer) where(slug string) string {
	return fmt.Sprintf("Bitbucket Server repository %s/%s", b.project, slug)
}

// Repositories implements Provider: each repository on its default
// branch, the repository parameter being its name, as in Argo CD. A
// repository without a default branch (an empty one, or one whose default
// branch is gone) is left out, as Argo CD does.
func (b *bitbucketServer) Repositories(ctx context.Context, protocol string) ([]Repository, error) {
	api := b.client(ctx)
	repos, err := serverPages(MaxRepositories, "Bitbucket Server project "+b.project, "repositories",
		func(opts map[string]any) (*bitbucketv1.APIResponse, error) {
			return api.GetRepositoriesWithOptions(b.project, opts)
		},
		bitbucketv1.GetRepositoriesResponse)
	if err != nil {
		return nil, err
	}
	var out []Repository
	for _, r := range repos {
		url, err := cloneURL(protocol, serverCloneLink(r, "ssh"), serverCloneLink(r, "http"))
		if err != nil {
			return nil, err
		}
		branch, err := b.defaultBranch(api, r.Slug)
		if err != nil {
			return nil, err
		}
		if branch == nil {
			continue
		}
		org := b.project
		if r.Project != nil && r.Project.Key != "" {
			org = r.Project.Key
		}
		b.remember(int64(r.ID), r.Slug)
		out = append(out, Repository{Organization: org, Repository: r.Name, URL: url, Branch: branch.DisplayID,
			SHA: branch.LatestCommit, Labels: []string{}, RepositoryID: int64(r.ID)})
	}
	return out, nil
}

// serverCloneLink is a repository's clone link of a name: "ssh", or
// "http" (http or https, as the server is set up, which Argo CD takes for
// https); empty when it has none.
func serverCloneLink(r bitbucketv1.Repository, name string) string {
	if r.Links == nil {
		return ""
	}
	for _, l := range r.Links.Clone {
		if l.Name == name {
			return l.Href
		}
	}
	return ""
}

// remember notes a listed repository's slug.
func (b *bitbucketServer) remember(id int64, slug string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.slugs[id] = slug
}

// slug is the slug of a listed repository, else its name.
func (b *bitbucketServer) slug(r Repository) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.slugs[r.RepositoryID]; ok {
		return s
	}
	return r.Repository
}

// defaultBranch reads a repository's default branch: nil when it has none
// (an empty repository answers with no content, one whose default branch
// is gone with 404).
func (b *bitbucketServer) defaultBranch(api *bitbucketv1.DefaultApiService, slug string) (*bitbucketv1.Branch, error) {
	resp, err := api.GetDefaultBranch(b.project, slug)
	switch {
	case serverStatus(resp) == http.StatusNotFound, resp == nil && errors.Is(err, io.EOF):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: reading the default branch: %w", b.where(slug), err)
	}
	branch, err := bitbucketv1.GetBranchResponse(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the default branch: %w", b.where(slug), err)
	}
	return &branch, nil
}

// Branches implements Provider: every branch with all or the provider's
// allBranches, else the default branch (none when it is gone).
func (b *bitbucketServer) Branches(ctx context.Context, repo Repository, all bool) ([]Repository, error) {
	api, slug := b.client(ctx), b.slug(repo)
	var branches []bitbucketv1.Branch
	if all || b.allBranches {
		var err error
		branches, err = serverPages(MaxBranches, b.where(slug), "branches",
			func(opts map[string]any) (*bitbucketv1.APIResponse, error) {
				return api.GetBranches(b.project, slug, opts)
			},
			bitbucketv1.GetBranchesResponse)
		if err != nil {
			return nil, err
		}
	} else {
		d, err := b.defaultBranch(api, slug)
		if err != nil {
			return nil, err
		}
		if d != nil {
			branches = append(branches, *d)
		}
	}
	out := make([]Repository, 0, len(branches))
	for _, br := range branches {
		r := repo
		r.Branch, r.SHA = br.DisplayID, br.LatestCommit
		out = append(out, r)
	}
	return out, nil
}

// HasPath implements Provider: the server tells a file or a directory's
// type at the branch, or answers 404.
func (b *bitbucketServer) HasPath(ctx context.Context, repo Repository, path string) (bool, error) {
	slug := b.slug(repo)
	resp, err := b.client(ctx).GetContent_0(b.project, slug, strings.Trim(path, "/"), map[string]any{"at": repo.Branch, "type_": true})
	switch {
	case serverStatus(resp) == http.StatusNotFound:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s: reading %s on %s: %w", b.where(slug), path, repo.Branch, err)
	}
	return true, nil
}

// serverPages gathers a Bitbucket Server listing through pages: page n
// asks from offset n-1 and the answer's nextPageStart gives the next; an
// empty page ends it too. Errors name where and what is listed.
func serverPages[T any](limit int, where, what string, call func(opts map[string]any) (*bitbucketv1.APIResponse, error),
	decode func(*bitbucketv1.APIResponse) ([]T, error)) ([]T, error) {
	return pages(limit, where+" "+what, func(page int) ([]T, int, error) {
		resp, err := call(map[string]any{"limit": pageSize, "start": page - 1})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: listing %s: %w", where, what, err)
		}
		items, err := decode(resp)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: reading %s: %w", where, what, err)
		}
		more, start := bitbucketv1.HasNextPage(resp)
		if !more || len(items) == 0 {
			return items, 0, nil
		}
		return items, start + 1, nil
	})
}

// serverStatus is the HTTP status of a Bitbucket Server answer, 0 when
// there was none.
func serverStatus(r *bitbucketv1.APIResponse) int {
	if r == nil || r.Response == nil {
		return 0
	}
	return r.StatusCode
}
