package scmserver

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Repo is a repository of an organization the server holds.
type Repo struct {
	Name          string
	DefaultBranch string
	Topics        []string
	Archived      bool
	// Branches maps each branch to its head commit; Files lists each
	// branch's files (directories are their prefixes).
	Branches map[string]string
	Files    map[string][]string
}

// Org is a local GitHub API serving one organization's repositories,
// their branches and contents, as the SCM provider generator reads them.
type Org struct {
	URL   string
	mu    sync.Mutex
	repos []Repo
	app   *GitHubApp
	host  string
}

// GitHubOrg starts a GitHub API for organization org; its URL is the
// API's base (…/api/v3/).
func GitHubOrg(t testing.TB, token, org string, repos ...Repo) *Org {
	o := &Org{repos: repos}
	mux := http.NewServeMux()
	prefix := "/api/v3/"
	mux.HandleFunc("GET "+prefix+"orgs/"+org+"/repos", func(w http.ResponseWriter, r *http.Request) {
		out := []map[string]any{}
		for i, repo := range o.snapshot() {
			out = append(out, map[string]any{"id": i + 1, "name": repo.Name, "default_branch": repo.DefaultBranch, "topics": repo.Topics,
				"archived": repo.Archived, "ssh_url": "git@" + o.host + ":" + org + "/" + repo.Name + ".git",
				"clone_url": "https://" + o.host + "/" + org + "/" + repo.Name + ".git"})
		}
		reply(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET "+prefix+"repos/"+org+"/{repo}/branches", func(w http.ResponseWriter, r *http.Request) {
		repo, ok := o.repo(w, r.PathValue("repo"))
		if !ok {
			return
		}
		out := []map[string]any{}
		for _, name := range sortedKeys(repo.Branches) {
			out = append(out, map[string]any{"name": name, "commit": map[string]string{"sha": repo.Branches[name]}})
		}
		reply(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET "+prefix+"repos/"+org+"/{repo}/branches/{branch}", func(w http.ResponseWriter, r *http.Request) {
		repo, ok := o.repo(w, r.PathValue("repo"))
		if !ok {
			return
		}
		sha, found := repo.Branches[r.PathValue("branch")]
		if !found {
			reply(w, http.StatusNotFound, map[string]string{"message": "Branch not found"})
			return
		}
		reply(w, http.StatusOK, map[string]any{"name": r.PathValue("branch"), "commit": map[string]string{"sha": sha}})
	})
	mux.HandleFunc("GET "+prefix+"repos/"+org+"/{repo}/contents/{path...}", func(w http.ResponseWriter, r *http.Request) {
		repo, ok := o.repo(w, r.PathValue("repo"))
		if !ok {
			return
		}
		path := strings.Trim(r.PathValue("path"), "/")
		for _, f := range repo.Files[r.URL.Query().Get("ref")] {
			if f == path {
				reply(w, http.StatusOK, map[string]any{"type": "file", "name": path[strings.LastIndex(path, "/")+1:], "path": path})
				return
			}
			if strings.HasPrefix(f, path+"/") {
				reply(w, http.StatusOK, []map[string]any{{"type": "file", "path": f}})
				return
			}
		}
		reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	})
	registerApp(mux, prefix, org, o.installedApp)
	s := &Server{}
	start(t, s, func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "Bearer "+token || appAuth(o.installedApp(), r)
	}, mux)
	o.URL = s.URL + prefix
	o.host = strings.TrimPrefix(s.URL, "http://")
	return o
}

func (o *Org) snapshot() []Repo {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.repos)
}

// InstallApp installs a GitHub App on the organization: its installation
// token reads the organization as the API's token does.
func (o *Org) InstallApp(app *GitHubApp) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.app = app
}

func (o *Org) installedApp() *GitHubApp {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.app
}

// AddRepo adds a repository to the organization.
func (o *Org) AddRepo(r Repo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.repos = append(o.repos, r)
}

func (o *Org) repo(w http.ResponseWriter, name string) (Repo, bool) {
	for _, r := range o.snapshot() {
		if r.Name == name {
			return r, true
		}
	}
	reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	return Repo{}, false
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
