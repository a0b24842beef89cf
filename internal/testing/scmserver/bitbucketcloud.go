package scmserver

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// BitbucketCloud starts a Bitbucket Cloud REST API 2.0 for workspace,
// holding repos: repositories with https and ssh clone links and main
// branch (none for an empty DefaultBranch), branches (refs/branches),
// sources (src/{commit or branch}/{path}: a file's content, a
// directory's listing) and pull requests (by state, OPEN by default),
// paged by page and pagelen, each page naming the next one's address.
// Its URL is the host and /2.0.
func BitbucketCloud(t testing.TB, auth BitbucketAuth, workspace string, repos ...Repo) *Bitbucket {
	b := &Bitbucket{owner: workspace, repos: repos, prs: map[string][]*PullRequest{}}
	prefix := "GET /2.0/repositories/" + workspace
	mux := http.NewServeMux()
	mux.HandleFunc(prefix, func(w http.ResponseWriter, r *http.Request) {
		var out []any
		for i, repo := range b.repos {
			out = append(out, b.cloudRepoJSON(i, repo))
		}
		b.cloudPage(w, r, out)
	})
	mux.HandleFunc(prefix+"/{slug}/refs/branches", b.cloudRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		var out []any
		for _, name := range sortedKeys(repo.Branches) {
			out = append(out, cloudBranchJSON(name, repo.Branches[name]))
		}
		b.cloudPage(w, r, out)
	}))
	mux.HandleFunc(prefix+"/{slug}/refs/branches/{name...}", b.cloudRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		sha, ok := repo.Branches[r.PathValue("name")]
		if !ok {
			cloudError(w, http.StatusNotFound, "Branch not found")
			return
		}
		reply(w, http.StatusOK, cloudBranchJSON(r.PathValue("name"), sha))
	}))
	mux.HandleFunc(prefix+"/{slug}/src/{ref}/{path...}", b.cloudRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		files, ok := filesAt(repo, r.PathValue("ref"))
		path := strings.Trim(r.PathValue("path"), "/")
		switch kind := pathKind(files, path); {
		case !ok || kind == "":
			cloudError(w, http.StatusNotFound, "No such file or directory: "+path)
		case kind == "FILE":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = fmt.Fprintf(w, "content of %s\n", path)
		default:
			var out []any
			for _, f := range files {
				if path == "" || strings.HasPrefix(f, path+"/") {
					out = append(out, map[string]any{"type": "commit_file", "path": f})
				}
			}
			b.cloudPage(w, r, out)
		}
	}))
	pulls := b.cloudRepo(func(w http.ResponseWriter, r *http.Request, repo Repo) {
		state := cmp.Or(r.URL.Query().Get("state"), "OPEN")
		var out []any
		for _, p := range b.prs[bitbucketSlug(repo.Name)] {
			if (state == "OPEN") != p.Closed {
				out = append(out, b.cloudPullJSON(repo, p))
			}
		}
		b.cloudPage(w, r, out)
	})
	mux.HandleFunc(prefix+"/{slug}/pullrequests", pulls)
	mux.HandleFunc(prefix+"/{slug}/pullrequests/{$}", pulls)
	s := &Server{}
	start(t, s, auth.allows, b.serve(mux, cloudErrorJSON("Resource not found")))
	b.URL, b.host = s.URL+"/2.0", strings.TrimPrefix(s.URL, "http://")
	return b
}

// cloudRepo hands h the repository the path's slug names, or answers 404.
func (b *Bitbucket) cloudRepo(h func(http.ResponseWriter, *http.Request, Repo)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		repo, ok := b.repo(r.PathValue("slug"))
		if !ok {
			cloudError(w, http.StatusNotFound, "Repository "+b.owner+"/"+r.PathValue("slug")+" not found")
			return
		}
		h(w, r, repo)
	}
}

// cloudPage answers one page of items: page (from 1) of the query's
// pagelen (10 by default), with the next page's address unless last.
func (b *Bitbucket) cloudPage(w http.ResponseWriter, r *http.Request, items []any) {
	page, pagelen := max(queryInt(r, "page", 1), 1), b.size(queryInt(r, "pagelen", 10), 10)
	values, _, last := b.window(items, (page-1)*pagelen, pagelen)
	out := map[string]any{"page": page, "pagelen": pagelen, "values": values}
	if !b.endless {
		out["size"] = len(items)
	}
	if !last {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page+1))
		out["next"] = "http://" + r.Host + r.URL.Path + "?" + q.Encode()
	}
	reply(w, http.StatusOK, out)
}

// cloudRepoJSON is a repository as Bitbucket Cloud shows it.
func (b *Bitbucket) cloudRepoJSON(i int, repo Repo) map[string]any {
	slug := bitbucketSlug(repo.Name)
	out := map[string]any{"type": "repository", "uuid": fmt.Sprintf("{%08d-0000-4000-8000-000000000000}", i+1),
		"name": repo.Name, "slug": slug, "full_name": b.owner + "/" + slug, "is_private": true, "scm": "git",
		"links": map[string]any{"clone": []map[string]string{
			{"name": "https", "href": "https://" + b.host + "/" + b.owner + "/" + slug + ".git"},
			{"name": "ssh", "href": "git@" + b.host + ":" + b.owner + "/" + slug + ".git"},
		}}}
	if repo.DefaultBranch != "" {
		out["mainbranch"] = map[string]string{"type": "branch", "name": repo.DefaultBranch}
	}
	return out
}

// cloudBranchJSON is a branch as Bitbucket Cloud shows it.
func cloudBranchJSON(name, sha string) map[string]any {
	return map[string]any{"type": "branch", "name": name, "target": map[string]string{"type": "commit", "hash": sha}}
}

// cloudPullJSON is a pull request as Bitbucket Cloud shows it.
func (b *Bitbucket) cloudPullJSON(repo Repo, p *PullRequest) map[string]any {
	state := "OPEN"
	if p.Closed {
		state = "DECLINED"
	}
	end := func(branch, sha string) map[string]any {
		return map[string]any{"branch": map[string]string{"name": branch}, "commit": map[string]string{"hash": sha},
			"repository": map[string]string{"full_name": b.owner + "/" + bitbucketSlug(repo.Name)}}
	}
	return map[string]any{"type": "pullrequest", "id": p.Number, "title": p.Title, "description": p.Body, "state": state,
		"source": end(p.Head, p.HeadSHA), "destination": end(p.Base, repo.Branches[p.Base]),
		"author": map[string]string{"type": "user", "nickname": p.Author, "display_name": p.Author}}
}

// cloudErrorJSON is Bitbucket Cloud's error body.
func cloudErrorJSON(message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]string{"message": message}}
}

// cloudError answers an error as Bitbucket Cloud does.
func cloudError(w http.ResponseWriter, status int, message string) {
	reply(w, status, cloudErrorJSON(message))
}
