package pullrequest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"

	"github.com/capstan-cd/capstan/internal/applicationset/azuredevopsgit"
)

// azureName starts the service's errors.
const azureName = "Azure DevOps"

// azureBranchPrefix starts the full name of a branch.
const azureBranchPrefix = "refs/heads/"

// azureNotFound are the type keys of the errors Azure DevOps answers for
// a repository or a project it does not have.
var azureNotFound = []string{"GitRepositoryNotFoundException", "ProjectDoesNotExistWithNameException", "ProjectDoesNotExistException"}

// azureDevOps lists an Azure DevOps repository's active pull requests.
type azureDevOps struct {
	conn               *azuredevopsgit.Conn
	org, project, repo string
	labels             []string
}

// AzureDevOps returns the Service of repository repo of a team project
// of organization, through the azure-devops-go-api git client; api is
// Azure DevOps Server's address (empty: https://dev.azure.com), token a
// personal access token (empty: anonymous), labels those a request must
// all carry. A request's Author is its creator's unique name up to "@",
// its HeadSHA the last merge source commit, as in Argo CD.
func AzureDevOps(api, organization, project, repo, token string, labels []string, hc *http.Client) (Service, error) {
	if organization == "" || project == "" || repo == "" {
		return nil, fmt.Errorf("%s: organization, project and repo are required", azureName)
	}
	return &azureDevOps{conn: azuredevopsgit.New(api, organization, token, httpClient(hc)), org: organization, project: project, repo: repo, labels: labels}, nil
}

// azureMissing tells Azure DevOps' answer for a missing repository or
// project.
func azureMissing(err error) bool {
	return slices.Contains(azureNotFound, azuredevopsgit.TypeKey(err))
}

// List implements Service: the active requests, $top at a time until a
// short page.
func (a *azureDevOps) List(ctx context.Context) ([]PullRequest, error) {
	where := fmt.Sprintf("%s repository %s/%s/%s", azureName, a.org, a.project, a.repo)
	c, err := a.conn.Git(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: finding the git service: %w", where, err)
	}
	active := git.PullRequestStatusValues.Active
	var out []PullRequest
	for skip := 0; ; {
		top := pageSize
		page, err := c.GetPullRequests(ctx, git.GetPullRequestsArgs{RepositoryId: &a.repo, Project: &a.project,
			SearchCriteria: &git.GitPullRequestSearchCriteria{Status: &active}, Top: &top, Skip: &skip})
		if azureMissing(err) {
			return nil, fmt.Errorf("%s: %w", where, ErrRepositoryNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: listing pull requests: %w", where, err)
		}
		if page == nil {
			return out, nil
		}
		for _, p := range *page {
			if pr, ok := a.convert(p); ok {
				out = append(out, pr)
			}
		}
		// The bound counts every request read, kept or not, so that a
		// server repeating pages of requests the labels leave out ends.
		skip += len(*page)
		if skip > MaxPullRequests {
			return nil, errTooMany(where)
		}
		if len(*page) < top {
			return out, nil
		}
	}
}

// convert reads one request, false for one without the fields a
// parameter set needs or without every label asked for.
func (a *azureDevOps) convert(p git.GitPullRequest) (PullRequest, bool) {
	if p.PullRequestId == nil || p.SourceRefName == nil || p.TargetRefName == nil ||
		p.LastMergeSourceCommit == nil || p.LastMergeSourceCommit.CommitId == nil {
		return PullRequest{}, false
	}
	var labels []string
	if p.Labels != nil {
		for _, l := range *p.Labels {
			if l.Name != nil {
				labels = append(labels, *l.Name)
			}
		}
	}
	if !hasAll(labels, a.labels) {
		return PullRequest{}, false
	}
	pr := PullRequest{Number: int64(*p.PullRequestId), Branch: strings.TrimPrefix(*p.SourceRefName, azureBranchPrefix),
		TargetBranch: strings.TrimPrefix(*p.TargetRefName, azureBranchPrefix), HeadSHA: *p.LastMergeSourceCommit.CommitId, Labels: labels}
	if p.Title != nil {
		pr.Title = *p.Title
	}
	if p.CreatedBy != nil && p.CreatedBy.UniqueName != nil {
		pr.Author, _, _ = strings.Cut(*p.CreatedBy.UniqueName, "@")
	}
	return pr, true
}
