package scmserver

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Azure is a local Azure DevOps Services API for one team project of one
// organization, speaking what the azure-devops-go-api git client calls:
// the location (OPTIONS _apis) and resource-area discovery it does
// first, then git repositories (Repo; Archived ones are disabled, and
// answer as missing), branch stats, refs, items and pull requests.
// Requests must carry the personal access token as basic auth.
type Azure struct {
	// URL is the host; the organization answers at URL + "/" + org.
	URL string

	mu           sync.Mutex
	org, project string
	repos        []Repo
	prs          []azurePR
	endless      bool
	host         string
}

// azurePR is a pull request of one repository.
type azurePR struct {
	repo string
	PullRequest
}

// Location IDs of the resources the fake serves, as Azure DevOps
// registers them.
const (
	azureResourceAreas = "e81700f7-3be2-46de-8624-2eb35882fcaa"
	azureGitArea       = "4e080c62-fa21-4fbc-8fef-2a10a2b38049"
)

// azureLocations are the locations OPTIONS _apis lists: ID, area,
// resource and route template.
var azureLocations = [][4]string{
	{azureResourceAreas, "Location", "ResourceAreas", "_apis/{resource}/{areaId}"},
	{"225f7195-f9c7-4d14-ab28-a83f7ff77e1f", "git", "repositories", "{project}/_apis/{area}/repositories/{repositoryId}"},
	{"d5b216de-d8d5-4d32-ae76-51df755b16d3", "git", "branchStats", "{project}/_apis/{area}/repositories/{repositoryId}/stats/branches"},
	{"2d874a60-a811-4f62-9c9f-963a6ea0a55b", "git", "refs", "{project}/_apis/{area}/repositories/{repositoryId}/refs/{*filter}"},
	{"fb93c0db-47ed-4a31-8c20-47552878fb44", "git", "items", "{project}/_apis/{area}/repositories/{repositoryId}/items/{*path}"},
	{"9946fd70-0d40-406e-b686-b4744cbbcc37", "git", "pullRequests", "{project}/_apis/{area}/repositories/{repositoryId}/pullRequests/{pullRequestId}"},
}

// AzureDevOps starts an Azure DevOps API for team project project of
// organization org, holding repos.
func AzureDevOps(t testing.TB, token, org, project string, repos ...Repo) *Azure {
	a := &Azure{org: org, project: project, repos: repos}
	s := &Server{}
	start(t, s, func(r *http.Request) bool {
		_, pass, ok := r.BasicAuth()
		return ok && pass == token
	}, http.HandlerFunc(a.serve))
	a.URL = s.URL
	a.host = strings.TrimPrefix(s.URL, "http://")
	return a
}

// AddRepo adds a repository to the project.
func (a *Azure) AddRepo(r Repo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.repos = append(a.repos, r)
}

// AddPullRequest opens a request on repository repo (Author is the
// creator's unique name, an e-mail address) and returns its number.
func (a *Azure) AddPullRequest(repo string, p PullRequest) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	p.Number = int64(len(a.prs) + 1)
	a.prs = append(a.prs, azurePR{repo: repo, PullRequest: p})
	return p.Number
}

// SetEndless makes every refs and pull request page name a next one, as
// a broken server would.
func (a *Azure) SetEndless(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endless = on
}

// serve routes a request under the organization (which the client
// lower-cases).
func (a *Azure) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(segs) < 2 || !strings.EqualFold(segs[0], a.org) {
		azureError(w, http.StatusNotFound, "NotFoundException", "no such organization")
		return
	}
	rest := segs[1:]
	switch {
	case r.Method == http.MethodOptions && len(rest) == 1 && rest[0] == "_apis":
		a.locations(w)
	case r.Method == http.MethodGet && strings.Join(rest, "/") == "_apis/ResourceAreas":
		reply(w, http.StatusOK, azureList([]map[string]any{{"id": azureGitArea, "name": "git", "locationUrl": a.URL + "/" + a.org + "/"}}))
	case r.Method == http.MethodGet && len(rest) >= 4 && rest[1] == "_apis" && rest[2] == "git" && rest[3] == "repositories":
		a.git(w, r, rest[0], rest[4:])
	default:
		azureError(w, http.StatusNotFound, "NotFoundException", "no route "+r.Method+" "+r.URL.Path)
	}
}

// locations answers the client's location lookup.
func (a *Azure) locations(w http.ResponseWriter) {
	var out []map[string]any
	for _, l := range azureLocations {
		out = append(out, map[string]any{"id": l[0], "area": l[1], "resourceName": l[2], "routeTemplate": l[3],
			"minVersion": "1.0", "maxVersion": "7.1", "releasedVersion": "7.0", "resourceVersion": 1})
	}
	reply(w, http.StatusOK, azureList(out))
}

// git serves the git area of a project: rest is what follows
// repositories/.
func (a *Azure) git(w http.ResponseWriter, r *http.Request, project string, rest []string) {
	if project != a.project {
		azureError(w, http.StatusNotFound, "ProjectDoesNotExistWithNameException", "TF200016: The following project does not exist: "+project+".")
		return
	}
	if len(rest) == 0 {
		var out []map[string]any
		for i, repo := range a.repos {
			out = append(out, a.repoJSON(i, repo))
		}
		reply(w, http.StatusOK, azureList(out))
		return
	}
	i := slices.IndexFunc(a.repos, func(repo Repo) bool { return repo.Name == rest[0] })
	for j := range a.repos {
		if azureRepoID(j) == rest[0] {
			i = j
		}
	}
	if i < 0 || a.repos[i].Archived {
		azureError(w, http.StatusNotFound, "GitRepositoryNotFoundException",
			"TF401019: The Git repository with name or identifier "+rest[0]+" does not exist or you do not have permissions for the operation you are attempting.")
		return
	}
	repo, q := a.repos[i], r.URL.Query()
	switch strings.Join(rest[1:], "/") {
	case "stats/branches":
		a.branchStats(w, repo, q.Get("name"))
	case "refs":
		a.refs(w, repo, q.Get("filter"), q.Get("$top"), q.Get("continuationToken"))
	case "items":
		a.item(w, repo, q.Get("path"), q.Get("versionDescriptor.version"))
	case "pullRequests":
		a.pulls(w, repo, q.Get("searchCriteria.status"), q.Get("$top"), q.Get("$skip"))
	default:
		azureError(w, http.StatusNotFound, "NotFoundException", "no route "+r.URL.Path)
	}
}

// repoJSON is a repository as Azure DevOps gives it.
func (a *Azure) repoJSON(i int, repo Repo) map[string]any {
	hostname, _, _ := strings.Cut(a.host, ":")
	out := map[string]any{"id": azureRepoID(i), "name": repo.Name, "isDisabled": repo.Archived,
		"project":   map[string]string{"name": a.project},
		"remoteUrl": "https://" + a.org + "@" + a.host + "/" + a.org + "/" + a.project + "/_git/" + repo.Name,
		"sshUrl":    "git@ssh." + hostname + ":v3/" + a.org + "/" + a.project + "/" + repo.Name}
	if repo.DefaultBranch != "" {
		out["defaultBranch"] = "refs/heads/" + repo.DefaultBranch
	}
	return out
}

// azureRepoID is the ID of the i-th repository.
func azureRepoID(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i+1) }

// branchStats answers one branch (name) or every one.
func (a *Azure) branchStats(w http.ResponseWriter, repo Repo, name string) {
	stats := func(b string) map[string]any {
		return map[string]any{"name": b, "commit": map[string]string{"commitId": repo.Branches[b]}, "aheadCount": 0, "behindCount": 0}
	}
	if name == "" {
		var out []map[string]any
		for _, b := range sortedKeys(repo.Branches) {
			out = append(out, stats(b))
		}
		reply(w, http.StatusOK, azureList(out))
		return
	}
	if _, ok := repo.Branches[name]; !ok {
		azureUnresolvable(w, name)
		return
	}
	reply(w, http.StatusOK, stats(name))
}

// refs answers a page of the branch refs the filter starts; the
// continuation token is the next page's offset.
func (a *Azure) refs(w http.ResponseWriter, repo Repo, filter, top, token string) {
	var all []map[string]any
	for _, b := range sortedKeys(repo.Branches) {
		if strings.HasPrefix("heads/"+b, filter) {
			all = append(all, map[string]any{"name": "refs/heads/" + b, "objectId": repo.Branches[b]})
		}
	}
	page, next := a.page(all, top, token)
	if next != "" {
		w.Header().Set("X-MS-ContinuationToken", next)
	}
	reply(w, http.StatusOK, azureList(page))
}

// page cuts a page of $top items (all without) at the offset from
// names; next is the following page's offset, "" after the last.
func (a *Azure) page(all []map[string]any, top, from string) (page []map[string]any, next string) {
	n, _ := strconv.Atoi(top)
	return pageOf(all, from, n, a.endless)
}

// item answers the item at path on a branch: a file, or a folder (a
// prefix of files).
func (a *Azure) item(w http.ResponseWriter, repo Repo, path, branch string) {
	if _, ok := repo.Branches[branch]; !ok {
		azureUnresolvable(w, branch)
		return
	}
	path = strings.Trim(path, "/")
	for _, f := range repo.Files[branch] {
		if path == "" || f == path || strings.HasPrefix(f, path+"/") {
			folder := f != path
			typ := "blob"
			if folder {
				typ = "tree"
			}
			reply(w, http.StatusOK, map[string]any{"objectId": "0123abcd", "gitObjectType": typ, "path": "/" + path, "isFolder": folder})
			return
		}
	}
	azureError(w, http.StatusNotFound, "GitItemNotFoundException",
		"TF401174: The item '/"+path+"' could not be found in the repository '"+repo.Name+"' at the version specified by '<Branch: "+branch+" >'.")
}

// pulls answers a page of a repository's requests of a status (active
// by default; all for every one), $top from $skip.
func (a *Azure) pulls(w http.ResponseWriter, repo Repo, status, top, skip string) {
	var all []map[string]any
	for _, p := range a.prs {
		closed := p.Closed
		if p.repo != repo.Name || status != "all" && closed != (status == "completed" || status == "abandoned") {
			continue
		}
		labels := []map[string]any{}
		for _, l := range p.Labels {
			labels = append(labels, map[string]any{"name": l, "active": true})
		}
		all = append(all, map[string]any{"pullRequestId": p.Number, "title": p.Title, "description": p.Body,
			"status":        map[bool]string{false: "active", true: "completed"}[closed],
			"sourceRefName": "refs/heads/" + p.Head, "targetRefName": "refs/heads/" + p.Base, "labels": labels,
			"createdBy":             map[string]string{"uniqueName": p.Author, "displayName": p.Author},
			"lastMergeSourceCommit": map[string]string{"commitId": p.HeadSHA},
			"repository":            map[string]string{"name": repo.Name}})
	}
	page, _ := a.page(all, top, skip)
	reply(w, http.StatusOK, azureList(page))
}

// azureList wraps a collection as Azure DevOps does.
func azureList(v []map[string]any) map[string]any {
	if v == nil {
		v = []map[string]any{}
	}
	return map[string]any{"count": len(v), "value": v}
}

// azureUnresolvable answers a branch the repository does not have.
func azureUnresolvable(w http.ResponseWriter, branch string) {
	azureError(w, http.StatusNotFound, "GitUnresolvableToCommitException",
		"TF401175: The version descriptor <Branch: "+branch+" > could not be resolved to a version in the repository.")
}

// azureError answers an error as Azure DevOps does.
func azureError(w http.ResponseWriter, status int, typeKey, message string) {
	reply(w, status, map[string]any{"$id": "1", "innerException": nil, "message": message,
		"typeName": "Microsoft.TeamFoundation." + typeKey, "typeKey": typeKey, "errorCode": 0, "eventId": 3000})
}
