package scmserver

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// BitbucketAuth is what a Bitbucket fake asks of each request: a user
// name and password (basic auth) or a bearer token; all empty: nothing.
type BitbucketAuth struct {
	Username, Password, Token string
}

// allows reports whether r carries the credentials.
func (a BitbucketAuth) allows(r *http.Request) bool {
	if a.Token != "" && r.Header.Get("Authorization") == "Bearer "+a.Token {
		return true
	}
	if user, pass, ok := r.BasicAuth(); ok && a.Username != "" && user == a.Username && pass == a.Password {
		return true
	}
	return a.Token == "" && a.Username == ""
}

// Bitbucket is a local Bitbucket API, Server's (BitbucketServer) or
// Cloud's (BitbucketCloud), holding one project's (workspace's)
// repositories and their pull requests. A repository's slug is its name
// in lower case, spaces as dashes; its ID its place, from 1.
type Bitbucket struct {
	// URL is the API's address: the host for Server (the client adds
	// /rest), the host and /2.0 for Cloud.
	URL string

	mu       sync.Mutex
	owner    string
	repos    []Repo
	prs      map[string][]*PullRequest
	pageSize int
	endless  bool
	host     string
}

// AddRepo adds a repository.
func (b *Bitbucket) AddRepo(r Repo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.repos = append(b.repos, r)
}

// AddPullRequest opens a request on repository repo (its name) and
// returns its number.
func (b *Bitbucket) AddPullRequest(repo string, p PullRequest) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	slug := bitbucketSlug(repo)
	p.Number = int64(len(b.prs[slug]) + 1)
	b.prs[slug] = append(b.prs[slug], &p)
	return p.Number
}

// ClosePullRequest closes (declines) request number of repository repo.
func (b *Bitbucket) ClosePullRequest(repo string, number int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.prs[bitbucketSlug(repo)] {
		if p.Number == number {
			p.Closed = true
		}
	}
}

// SetPageSize makes pages hold at most n items, fewer than asked for
// (0: as many as asked).
func (b *Bitbucket) SetPageSize(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pageSize = n
}

// SetEndless makes every page of a listing name a next one, going round
// the items again, as a broken server would.
func (b *Bitbucket) SetEndless(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endless = on
}

// serve runs mux holding the fake's lock; it answers paths it does not
// know 404 with notFound.
func (b *Bitbucket) serve(mux *http.ServeMux, notFound any) http.Handler {
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { reply(w, http.StatusNotFound, notFound) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

// repo is the repository of a slug.
func (b *Bitbucket) repo(slug string) (Repo, bool) {
	for _, r := range b.repos {
		if bitbucketSlug(r.Name) == slug {
			return r, true
		}
	}
	return Repo{}, false
}

// window is one page of items: from start, n items (fewer at the end).
// Endless pages go round the items and never reach the end.
func (b *Bitbucket) window(items []any, start, n int) (page []any, next int, last bool) {
	page = []any{}
	if b.endless && len(items) > 0 {
		for i := range n {
			page = append(page, items[(start+i)%len(items)])
		}
		return page, start + n, false
	}
	end := min(start+n, len(items))
	if start < end {
		page = append(page, items[start:end]...)
	}
	return page, end, end >= len(items)
}

// size is how many items a page holds: asked (def when not), at most the
// page size set.
func (b *Bitbucket) size(asked, def int) int {
	if asked <= 0 {
		asked = def
	}
	if b.pageSize > 0 && b.pageSize < asked {
		return b.pageSize
	}
	return asked
}

// filesAt are a repository's files at ref: a branch (or refs/heads/
// branch), a branch's head commit, or the default branch when empty.
func filesAt(repo Repo, ref string) ([]string, bool) {
	ref = strings.TrimPrefix(cmp.Or(ref, repo.DefaultBranch), "refs/heads/")
	if _, ok := repo.Branches[ref]; ok {
		return repo.Files[ref], true
	}
	for branch, sha := range repo.Branches {
		if sha == ref {
			return repo.Files[branch], true
		}
	}
	return nil, false
}

// pathKind is "FILE", "DIRECTORY" or "" (missing) for path among files,
// as Bitbucket Server's browse names them.
func pathKind(files []string, path string) string {
	path = strings.Trim(path, "/")
	switch {
	case path == "" || slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, path+"/") }):
		return "DIRECTORY"
	case slices.Contains(files, path):
		return "FILE"
	}
	return ""
}

// bitbucketSlug is a repository name's slug.
func bitbucketSlug(name string) string { return strings.ReplaceAll(strings.ToLower(name), " ", "-") }

// queryInt is a query parameter's number, def when absent or bad.
func queryInt(r *http.Request, key string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(key)); err == nil {
		return n
	}
	return def
}

// BitbucketServer starts a Bitbucket Server (Data Center) REST API 1.0
// for project (its key), holding repos: repositories with ssh and http
// clone links, default branch (none answers 204, as for an empty
// repository; one not among Branches 404), branches, browse (with
// type=true: FILE or DIRECTORY) and pull requests, paged by start and
// limit with isLastPage and nextPageStart.
func BitbucketServer(t testing.TB, auth BitbucketAuth, project string, repos ...Repo) *Bitbucket {
	b := &Bitbucket{owner: project, repos: repos, prs: map[string][]*PullRequest{}}
	prefix := "GET /rest/api/1.0/projects/" + project + "/repos"
	mux := http.NewServeMux()
	mux.HandleFunc(prefix, func(w http.ResponseWriter, r *http.Request) {
		var out []any
		for i, repo := range b.repos {
			out = append(out, b.serverRepoJSON(i, repo))
		}
		b.serverPage(w, r, out)
	})
	mux.HandleFunc(prefix+"/{slug}/branches/default", b.serverRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		sha, ok := repo.Branches[repo.DefaultBranch]
		switch {
		case repo.DefaultBranch == "":
			w.WriteHeader(http.StatusNoContent)
		case !ok:
			serverError(w, http.StatusNotFound, "com.atlassian.bitbucket.repository.NoSuchBranchException", "Branch "+repo.DefaultBranch+" does not exist.")
		default:
			reply(w, http.StatusOK, serverBranchJSON(repo.DefaultBranch, sha, true))
		}
	}))
	mux.HandleFunc(prefix+"/{slug}/branches", b.serverRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		var out []any
		for _, name := range sortedKeys(repo.Branches) {
			out = append(out, serverBranchJSON(name, repo.Branches[name], name == repo.DefaultBranch))
		}
		b.serverPage(w, r, out)
	}))
	mux.HandleFunc(prefix+"/{slug}/browse/{path...}", b.serverRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		files, ok := filesAt(repo, r.URL.Query().Get("at"))
		kind := pathKind(files, r.PathValue("path"))
		if !ok || kind == "" {
			serverError(w, http.StatusNotFound, "com.atlassian.bitbucket.content.NoSuchPathException",
				"The path \""+r.PathValue("path")+"\" does not exist at revision \""+r.URL.Query().Get("at")+"\"")
			return
		}
		reply(w, http.StatusOK, map[string]string{"type": kind})
	}))
	mux.HandleFunc(prefix+"/{slug}/pull-requests", b.serverRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		state := cmp.Or(r.URL.Query().Get("state"), "OPEN")
		var out []any
		prs := b.prs[bitbucketSlug(repo.Name)]
		for i := len(prs) - 1; i >= 0; i-- { // newest first
			if p := prs[i]; state == "ALL" || (state == "OPEN") != p.Closed {
				out = append(out, b.serverPullJSON(repo, p))
			}
		}
		b.serverPage(w, r, out)
	}))
	s := &Server{}
	start(t, s, auth.allows, b.serve(mux, serverErrors("com.atlassian.bitbucket.NotFoundException", "Not found.")))
	b.URL, b.host = s.URL, strings.TrimPrefix(s.URL, "http://")
	return b
}

// serverRepo hands h the repository the path's slug names, or answers 404.
func (b *Bitbucket) serverRepo(h func(http.ResponseWriter, *http.Request, Repo)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		repo, ok := b.repo(r.PathValue("slug"))
		if !ok {
			serverError(w, http.StatusNotFound, "com.atlassian.bitbucket.repository.NoSuchRepositoryException",
				"Repository "+b.owner+"/"+r.PathValue("slug")+" does not exist.")
			return
		}
		h(w, r, repo)
	}
}

// serverPage answers one page of items: from the query's start, at most
// its limit (25 by default).
func (b *Bitbucket) serverPage(w http.ResponseWriter, r *http.Request, items []any) {
	start, limit := queryInt(r, "start", 0), b.size(queryInt(r, "limit", 25), 25)
	page, next, last := b.window(items, start, limit)
	out := map[string]any{"size": len(page), "limit": limit, "start": start, "isLastPage": last, "values": page}
	if !last {
		out["nextPageStart"] = next
	}
	reply(w, http.StatusOK, out)
}

// serverRepoJSON is a repository as Bitbucket Server shows it.
func (b *Bitbucket) serverRepoJSON(i int, repo Repo) map[string]any {
	slug, key := bitbucketSlug(repo.Name), strings.ToLower(b.owner)
	return map[string]any{"id": i + 1, "slug": slug, "name": repo.Name, "scmId": "git", "state": "AVAILABLE", "forkable": true,
		"project": map[string]any{"key": b.owner, "id": 1, "name": b.owner, "type": "NORMAL"},
		"links": map[string]any{"clone": []map[string]string{
			{"name": "ssh", "href": "ssh://git@" + b.host + "/" + key + "/" + slug + ".git"},
			{"name": "http", "href": "http://" + b.host + "/scm/" + key + "/" + slug + ".git"},
		}}}
}

// serverBranchJSON is a branch as Bitbucket Server shows it.
func serverBranchJSON(name, sha string, isDefault bool) map[string]any {
	return map[string]any{"id": "refs/heads/" + name, "displayId": name, "type": "BRANCH",
		"latestCommit": sha, "latestChangeset": sha, "isDefault": isDefault}
}

// serverPullJSON is a pull request as Bitbucket Server shows it.
func (b *Bitbucket) serverPullJSON(repo Repo, p *PullRequest) map[string]any {
	state := "OPEN"
	if p.Closed {
		state = "DECLINED"
	}
	ref := func(branch, sha string) map[string]any {
		return map[string]any{"id": "refs/heads/" + branch, "displayId": branch, "latestCommit": sha,
			"repository": map[string]any{"slug": bitbucketSlug(repo.Name), "name": repo.Name, "project": map[string]any{"key": b.owner}}}
	}
	return map[string]any{"id": p.Number, "version": p.Edits, "title": p.Title, "description": p.Body, "state": state,
		"open": !p.Closed, "closed": p.Closed, "fromRef": ref(p.Head, p.HeadSHA), "toRef": ref(p.Base, repo.Branches[p.Base]),
		"author": map[string]any{"role": "AUTHOR", "approved": false, "status": "UNAPPROVED",
			"user": map[string]any{"name": p.Author, "slug": p.Author, "displayName": p.Author, "active": true, "type": "NORMAL"}}}
}

// serverErrors is Bitbucket Server's error body.
func serverErrors(exception, message string) map[string]any {
	return map[string]any{"errors": []map[string]any{{"context": nil, "message": message, "exceptionName": exception}}}
}

// serverError answers an error as Bitbucket Server does.
func serverError(w http.ResponseWriter, status int, exception, message string) {
	reply(w, status, serverErrors(exception, message))
}
