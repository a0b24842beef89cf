package scmserver

import (
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Group is a local GitLab API serving one group's projects (Repo, with
// Topics as GitLab's topics), their branches and trees, as the SCM
// provider generator reads them. A project's ID is its place, from 1.
type Group struct {
	URL   string
	mu    sync.Mutex
	group string
	repos []Repo
	host  string
}

// GitLabGroup starts a GitLab API for group; its URL is the host, the
// API answering under /api/v4/.
func GitLabGroup(t testing.TB, token, group string, repos ...Repo) *Group {
	g := &Group{group: group, repos: repos}
	prefix := "/api/v4/"
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.EscapedPath(), prefix)
		q := r.URL.Query()
		if rest == "groups/"+url.PathEscape(group)+"/projects" && r.Method == http.MethodGet {
			out := []map[string]any{}
			for i, repo := range g.snapshot() {
				if q.Get("archived") == "false" && repo.Archived || q.Get("topic") != "" && !contains(repo.Topics, q.Get("topic")) {
					continue
				}
				out = append(out, map[string]any{"id": i + 1, "path": repo.Name, "default_branch": repo.DefaultBranch, "topics": repo.Topics,
					"archived": repo.Archived, "namespace": map[string]string{"full_path": group},
					"ssh_url_to_repo":  "git@" + g.host + ":" + group + "/" + repo.Name + ".git",
					"http_url_to_repo": "https://" + g.host + "/" + group + "/" + repo.Name + ".git"})
			}
			reply(w, http.StatusOK, out)
			return
		}
		id, sub, _ := strings.Cut(strings.TrimPrefix(rest, "projects/"), "/repository/")
		n, err := strconv.Atoi(id)
		repos := g.snapshot()
		if !strings.HasPrefix(rest, "projects/") || err != nil || n < 1 || n > len(repos) {
			reply(w, http.StatusNotFound, map[string]string{"message": "404 Project Not Found"})
			return
		}
		repo := repos[n-1]
		switch {
		case sub == "branches":
			out := []map[string]any{}
			for _, b := range sortedKeys(repo.Branches) {
				out = append(out, map[string]any{"name": b, "commit": map[string]string{"id": repo.Branches[b]}})
			}
			reply(w, http.StatusOK, out)
		case strings.HasPrefix(sub, "branches/"):
			b, _ := url.PathUnescape(strings.TrimPrefix(sub, "branches/"))
			sha, ok := repo.Branches[b]
			if !ok {
				reply(w, http.StatusNotFound, map[string]string{"message": "404 Branch Not Found"})
				return
			}
			reply(w, http.StatusOK, map[string]any{"name": b, "commit": map[string]string{"id": sha}})
		case sub == "tree":
			dir := q.Get("path")
			out := []map[string]any{}
			seen := map[string]bool{}
			for _, f := range repo.Files[q.Get("ref")] {
				rel := f
				if dir != "" {
					var ok bool
					if rel, ok = strings.CutPrefix(f, dir+"/"); !ok {
						continue
					}
				}
				first, _, isDir := strings.Cut(rel, "/")
				entry := path.Join(dir, first)
				if !seen[entry] {
					seen[entry] = true
					typ := "blob"
					if isDir {
						typ = "tree"
					}
					out = append(out, map[string]any{"name": first, "path": entry, "type": typ})
				}
			}
			if len(out) == 0 && dir != "" {
				reply(w, http.StatusNotFound, map[string]string{"message": "404 Tree Not Found"})
				return
			}
			reply(w, http.StatusOK, out)
		default:
			reply(w, http.StatusNotFound, map[string]string{"message": "404 Not Found"})
		}
	})
	s := &Server{}
	start(t, s, func(r *http.Request) bool { return r.Header.Get("Private-Token") == token }, handler)
	g.URL = s.URL
	g.host = strings.TrimPrefix(s.URL, "http://")
	return g
}

func (g *Group) snapshot() []Repo {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Repo(nil), g.repos...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
