package scmserver

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// AssumedAccessKey is the access key ID of the credentials the fake's
// STS hands out for an assumed role.
const AssumedAccessKey = "ASIAFAKEASSUMEDROLE"

// CodeCommit is a local AWS API for one account and region, speaking the
// JSON 1.1 protocol the AWS SDK uses for CodeCommit (X-Amz-Target
// CodeCommit_20150413.ListRepositories, GetRepository,
// BatchGetRepositories, ListBranches, GetBranch, GetFolder, GetFile) and
// for the Resource Groups Tagging API
// (ResourceGroupsTaggingAPI_20170126.GetResources), and STS's
// AssumeRole (query protocol). A Repo's Topics are its tags, "key=value"
// or "key"; listings page by tokens. Any SigV4-signed request is taken.
type CodeCommit struct {
	// URL is the endpoint of every service.
	URL string

	mu              sync.Mutex
	account, region string
	repos           []Repo
	pageSize        int
	endless         bool
	calls           []AWSCall
}

// AWSCall is one request the server took.
type AWSCall struct {
	// Action is the operation, as CodeCommit_20150413.GetBranch or
	// AssumeRole.
	Action string
	// AccessKey is the access key ID the request was signed with.
	AccessKey string
	// RoleARN is the role an AssumeRole asked for.
	RoleARN string
}

// awsInput holds the members of every request the fake reads; JSON
// matching ignores case, so nextToken and NextToken both land.
type awsInput struct {
	RepositoryName, BranchName, CommitSpecifier, FolderPath, FilePath, NextToken string
	RepositoryNames, ResourceTypeFilters                                         []string
	PaginationToken                                                              string
	ResourcesPerPage                                                             int
	TagFilters                                                                   []struct {
		Key    string
		Values []string
	}
}

// AWSCodeCommit starts an AWS API holding repos for account in region.
// Listings give 1000 items a page (SetPageSize changes it).
func AWSCodeCommit(t testing.TB, account, region string, repos ...Repo) *CodeCommit {
	c := &CodeCommit{account: account, region: region, repos: repos, pageSize: 1000}
	s := &Server{}
	start(t, s, func(r *http.Request) bool {
		return strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=")
	}, http.HandlerFunc(c.serve))
	c.URL = s.URL
	return c
}

// AddRepo adds a repository.
func (c *CodeCommit) AddRepo(r Repo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.repos = append(c.repos, r)
}

// SetPageSize sets how many items a listing page holds at most.
func (c *CodeCommit) SetPageSize(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pageSize = n
}

// SetEndless makes every listing page name a next one, as a broken
// server would.
func (c *CodeCommit) SetEndless(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endless = on
}

// Calls returns the requests taken so far.
func (c *CodeCommit) Calls() []AWSCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// serve dispatches one request on its X-Amz-Target (STS has none).
func (c *CodeCommit) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	auth := strings.TrimPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=")
	key, _, _ := strings.Cut(auth, "/")
	target := r.Header.Get("X-Amz-Target")
	if target == "" {
		c.assumeRole(w, r, key)
		return
	}
	c.calls = append(c.calls, AWSCall{Action: target, AccessKey: key})
	var in awsInput
	if err := decode(r, &in); err != nil {
		awsError(w, "SerializationException", err.Error())
		return
	}
	switch target {
	case "ResourceGroupsTaggingAPI_20170126.GetResources":
		c.getResources(w, in)
	case "CodeCommit_20150413.ListRepositories":
		var all []map[string]string
		for _, r := range c.repos {
			all = append(all, map[string]string{"repositoryName": r.Name, "repositoryId": "id-" + r.Name})
		}
		page, next := pageOf(all, in.NextToken, c.pageSize, c.endless)
		reply(w, http.StatusOK, map[string]any{"repositories": page, "nextToken": next})
	case "CodeCommit_20150413.BatchGetRepositories":
		found, missing := []map[string]any{}, []string{}
		for _, name := range in.RepositoryNames {
			if i := c.index(name); i >= 0 {
				found = append(found, c.metadata(c.repos[i]))
			} else {
				missing = append(missing, name)
			}
		}
		reply(w, http.StatusOK, map[string]any{"repositories": found, "repositoriesNotFound": missing})
	default:
		c.repository(w, target, in)
	}
}

// repository serves the calls on one repository.
func (c *CodeCommit) repository(w http.ResponseWriter, target string, in awsInput) {
	i := c.index(in.RepositoryName)
	if i < 0 {
		awsError(w, "RepositoryDoesNotExistException", in.RepositoryName+" does not exist")
		return
	}
	repo := c.repos[i]
	switch target {
	case "CodeCommit_20150413.GetRepository":
		reply(w, http.StatusOK, map[string]any{"repositoryMetadata": c.metadata(repo)})
	case "CodeCommit_20150413.ListBranches":
		page, next := pageOf(sortedKeys(repo.Branches), in.NextToken, c.pageSize, c.endless)
		reply(w, http.StatusOK, map[string]any{"branches": page, "nextToken": next})
	case "CodeCommit_20150413.GetBranch":
		sha, ok := repo.Branches[in.BranchName]
		if !ok {
			awsError(w, "BranchDoesNotExistException", "Branch '"+in.BranchName+"' does not exist in the repository")
			return
		}
		reply(w, http.StatusOK, map[string]any{"branch": map[string]string{"branchName": in.BranchName, "commitId": sha}})
	case "CodeCommit_20150413.GetFolder":
		c.getFolder(w, repo, in)
	case "CodeCommit_20150413.GetFile":
		path := strings.Trim(in.FilePath, "/")
		if _, ok := repo.Branches[in.CommitSpecifier]; !ok {
			awsError(w, "CommitDoesNotExistException", "no commit "+in.CommitSpecifier)
		} else if !slices.Contains(repo.Files[in.CommitSpecifier], path) {
			awsError(w, "FileDoesNotExistException", "no file "+in.FilePath)
		} else {
			reply(w, http.StatusOK, map[string]any{"blobId": "b10b", "commitId": repo.Branches[in.CommitSpecifier], "filePath": path,
				"fileMode": "NORMAL", "fileSize": 0, "fileContent": ""})
		}
	default:
		awsError(w, "UnknownOperationException", target)
	}
}

// index is the place of the repository named name, or -1.
func (c *CodeCommit) index(name string) int {
	return slices.IndexFunc(c.repos, func(r Repo) bool { return r.Name == name })
}

// metadata is a repository's metadata as CodeCommit gives it.
func (c *CodeCommit) metadata(r Repo) map[string]any {
	host := "git-codecommit." + c.region + ".amazonaws.com/v1/repos/" + r.Name
	out := map[string]any{"accountId": c.account, "repositoryId": "id-" + r.Name, "repositoryName": r.Name,
		"cloneUrlHttp": "https://" + host, "cloneUrlSsh": "ssh://" + host, "Arn": c.arn(r.Name)}
	if r.DefaultBranch != "" {
		out["defaultBranch"] = r.DefaultBranch
	}
	return out
}

// arn is a repository's ARN.
func (c *CodeCommit) arn(name string) string {
	return "arn:aws:codecommit:" + c.region + ":" + c.account + ":" + name
}

// getFolder lists a folder's files and subfolders on a branch.
func (c *CodeCommit) getFolder(w http.ResponseWriter, repo Repo, in awsInput) {
	if _, ok := repo.Branches[in.CommitSpecifier]; !ok {
		awsError(w, "CommitDoesNotExistException", "no commit "+in.CommitSpecifier)
		return
	}
	dir := strings.Trim(in.FolderPath, "/")
	files, folders := []map[string]string{}, []map[string]string{}
	seen := map[string]bool{}
	for _, f := range repo.Files[in.CommitSpecifier] {
		rel, ok := f, true
		if dir != "" {
			rel, ok = strings.CutPrefix(f, dir+"/")
		}
		first, _, isDir := strings.Cut(rel, "/")
		if !ok || seen[first] {
			continue
		}
		seen[first] = true
		entry := map[string]string{"absolutePath": strings.TrimPrefix(dir+"/"+first, "/"), "relativePath": first}
		if isDir {
			folders = append(folders, entry)
		} else {
			files = append(files, entry)
		}
	}
	if dir != "" && len(seen) == 0 {
		awsError(w, "FolderDoesNotExistException", "no folder "+in.FolderPath)
		return
	}
	reply(w, http.StatusOK, map[string]any{"commitId": repo.Branches[in.CommitSpecifier], "folderPath": dir, "treeId": "7ree",
		"files": files, "subFolders": folders, "symbolicLinks": []any{}, "subModules": []any{}})
}

// getResources lists the tagged repositories every tag filter matches
// (a key, with one of its values when any is given).
func (c *CodeCommit) getResources(w http.ResponseWriter, in awsInput) {
	if len(in.ResourceTypeFilters) > 0 && !slices.Contains(in.ResourceTypeFilters, "codecommit:repository") &&
		!slices.Contains(in.ResourceTypeFilters, "codecommit") {
		reply(w, http.StatusOK, map[string]any{"ResourceTagMappingList": []any{}})
		return
	}
	var all []map[string]any
	for _, r := range c.repos {
		tags := map[string]string{}
		var list []map[string]string
		for _, t := range r.Topics {
			k, v, _ := strings.Cut(t, "=")
			tags[k] = v
			list = append(list, map[string]string{"Key": k, "Value": v})
		}
		keep := len(tags) > 0
		for _, f := range in.TagFilters {
			v, ok := tags[f.Key]
			keep = keep && ok && (len(f.Values) == 0 || slices.Contains(f.Values, v))
		}
		if keep {
			all = append(all, map[string]any{"ResourceARN": c.arn(r.Name), "Tags": list})
		}
	}
	size := c.pageSize
	if in.ResourcesPerPage > 0 {
		size = min(size, in.ResourcesPerPage)
	}
	page, next := pageOf(all, in.PaginationToken, size, c.endless)
	reply(w, http.StatusOK, map[string]any{"ResourceTagMappingList": page, "PaginationToken": next})
}

// assumeRole answers STS's AssumeRole with AssumedAccessKey.
func (c *CodeCommit) assumeRole(w http.ResponseWriter, r *http.Request, key string) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("Action") != "AssumeRole" {
		http.Error(w, "<ErrorResponse><Error><Code>InvalidAction</Code></Error></ErrorResponse>", http.StatusBadRequest)
		return
	}
	role := r.PostForm.Get("RoleArn")
	c.calls = append(c.calls, AWSCall{Action: "AssumeRole", AccessKey: key, RoleARN: role})
	type creds struct {
		AccessKeyID     string `xml:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      string
	}
	var out struct {
		XMLName     xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleResponse"`
		Credentials creds    `xml:"AssumeRoleResult>Credentials"`
		Arn         string   `xml:"AssumeRoleResult>AssumedRoleUser>Arn"`
		RoleID      string   `xml:"AssumeRoleResult>AssumedRoleUser>AssumedRoleId"`
		RequestID   string   `xml:"ResponseMetadata>RequestId"`
	}
	out.Credentials = creds{AssumedAccessKey, "assumed-secret", "assumed-session", "2099-01-01T00:00:00Z"}
	out.Arn, out.RoleID, out.RequestID = role, "AROAFAKE:session", "1"
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(out)
}

// awsError answers an AWS JSON protocol error.
func awsError(w http.ResponseWriter, code, message string) {
	w.Header().Set("X-Amzn-ErrorType", code)
	reply(w, http.StatusBadRequest, map[string]string{"__type": code, "message": message})
}

// pageOf cuts a page of at most size items at the offset a token names
// ("" the first); next is the following page's token, "" after the last.
// An endless server cycles through the items, always giving a full page
// and a next one.
func pageOf[T any](all []T, token string, size int, endless bool) (page []T, next string) {
	off, _ := strconv.Atoi(token)
	if size <= 0 {
		size = len(all)
	}
	if endless && len(all) > 0 {
		for j := range size {
			page = append(page, all[(off+j)%len(all)])
		}
		return page, strconv.Itoa(off + size)
	}
	if off < len(all) {
		page = all[off:min(off+size, len(all))]
	}
	if off+size < len(all) {
		next = strconv.Itoa(off + size)
	}
	return page, next
}
