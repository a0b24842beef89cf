package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// prProvider names the service a pull request event came from.
type prProvider string

const (
	prGitHub          prProvider = "GitHub"
	prGitLab          prProvider = "GitLab"
	prGitea           prProvider = "Gitea"
	prBitbucketServer prProvider = "Bitbucket Server"
	prBitbucketCloud  prProvider = "Bitbucket"
	prAzureDevOps     prProvider = "Azure DevOps"
)

// prEvent is what a pull (merge) request event says about where it
// happened, whatever the provider: enough to find the pull request
// generators that list that repository.
type prEvent struct {
	provider prProvider
	// host is the provider's host as the event names it ("" when it
	// does not).
	host string
	// owner and repo: GitHub and Gitea owner and name, Bitbucket Server
	// project key and slug, Bitbucket Cloud workspace and slug, Azure
	// DevOps project and repository.
	owner, repo string
	// projectPath and projectID are GitLab's target project.
	projectPath, projectID string
}

// The actions of each provider that change what a pull request generator
// lists: opened, closed, merged, new commits, labels.
var (
	gitHubPRActions    = []string{"opened", "closed", "reopened", "synchronize", "labeled", "unlabeled"}
	gitLabMRActions    = []string{"open", "close", "reopen", "update", "merge"}
	giteaPRActions     = []string{"opened", "closed", "reopened", "synchronized", "label_updated", "label_cleared", "edited"}
	bitbucketServerPRs = []string{"pr:opened", "pr:from_ref_updated", "pr:modified", "pr:merged", "pr:declined", "pr:deleted"}
	bitbucketCloudPRs  = []string{"pullrequest:created", "pullrequest:updated", "pullrequest:fulfilled", "pullrequest:rejected"}
	azureDevOpsPRs     = []string{"git.pullrequest.created", "git.pullrequest.updated", "git.pullrequest.merged"}
)

// parsePullRequest reads a pull request event whose signature parsePush
// already checked; nil when the event is another one or an action that
// changes nothing listed.
func parsePullRequest(h http.Header, body []byte) (*prEvent, error) {
	switch {
	case h.Get("X-GitHub-Event") == "pull_request":
		return parseHubPR(body, prGitHub, gitHubPRActions)
	case h.Get("X-Gitea-Event") == "pull_request" || h.Get("X-Gitea-Event") == "pull_request_label":
		return parseHubPR(body, prGitea, giteaPRActions)
	case h.Get("X-Gitlab-Event") == "Merge Request Hook":
		var e struct {
			Attrs struct {
				Action          string `json:"action"`
				TargetProjectID int64  `json:"target_project_id"`
			} `json:"object_attributes"`
			Project struct {
				WebURL string `json:"web_url"`
				Path   string `json:"path_with_namespace"`
			} `json:"project"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("GitLab merge request payload: %w", err)
		}
		if !slices.Contains(gitLabMRActions, e.Attrs.Action) {
			return nil, nil
		}
		return &prEvent{provider: prGitLab, host: hostOf(e.Project.WebURL), projectPath: e.Project.Path,
			projectID: strconv.FormatInt(e.Attrs.TargetProjectID, 10)}, nil
	case slices.Contains(bitbucketCloudPRs, h.Get("X-Event-Key")):
		var e struct {
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("pull request payload from Bitbucket: %w", err)
		}
		owner, repo, _ := strings.Cut(e.Repository.FullName, "/")
		return &prEvent{provider: prBitbucketCloud, owner: owner, repo: repo}, nil
	case slices.Contains(bitbucketServerPRs, h.Get("X-Event-Key")):
		var e struct {
			PullRequest struct {
				ToRef struct {
					Repository struct {
						Slug    string `json:"slug"`
						Project struct {
							Key string `json:"key"`
						} `json:"project"`
					} `json:"repository"`
				} `json:"toRef"`
			} `json:"pullRequest"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("pull request payload from Bitbucket Server: %w", err)
		}
		r := e.PullRequest.ToRef.Repository
		return &prEvent{provider: prBitbucketServer, owner: r.Project.Key, repo: r.Slug}, nil
	case h.Get("X-Vss-Activityid") != "":
		return parseAzurePR(body)
	}
	return nil, nil
}

// parseHubPR reads the pull request payload GitHub and Gitea share.
func parseHubPR(body []byte, provider prProvider, actions []string) (*prEvent, error) {
	var e struct {
		Action     string `json:"action"`
		Repository struct {
			Name    string `json:"name"`
			HTMLURL string `json:"html_url"`
			Owner   struct {
				Login    string `json:"login"`
				Username string `json:"username"`
			} `json:"owner"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("pull request payload from %s: %w", provider, err)
	}
	if !slices.Contains(actions, e.Action) {
		return nil, nil
	}
	owner := e.Repository.Owner.Login
	if owner == "" {
		owner = e.Repository.Owner.Username
	}
	return &prEvent{provider: provider, host: hostOf(e.Repository.HTMLURL), owner: owner, repo: e.Repository.Name}, nil
}

// parseAzurePR reads an Azure DevOps service hook's pull request event.
func parseAzurePR(body []byte) (*prEvent, error) {
	var e struct {
		EventType string `json:"eventType"`
		Resource  struct {
			Repository struct {
				Name    string `json:"name"`
				Project struct {
					Name string `json:"name"`
				} `json:"project"`
			} `json:"repository"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("pull request payload from Azure DevOps: %w", err)
	}
	if !slices.Contains(azureDevOpsPRs, e.EventType) {
		return nil, nil
	}
	return &prEvent{provider: prAzureDevOps, owner: e.Resource.Repository.Project.Name, repo: e.Resource.Repository.Name}, nil
}

// lists reports whether a pull request generator lists the repository of
// the event: same provider, same repository (names compared as each
// provider compares them) and, where both say, the same host.
func (e *prEvent) lists(g *v1alpha1.PullRequestGenerator) bool {
	switch {
	case e.provider == prGitHub && g.Github != nil:
		return strings.EqualFold(g.Github.Owner, e.owner) && strings.EqualFold(g.Github.Repo, e.repo) &&
			e.sameHost(g.Github.API, "github.com")
	case e.provider == prGitea && g.Gitea != nil:
		return strings.EqualFold(g.Gitea.Owner, e.owner) && strings.EqualFold(g.Gitea.Repo, e.repo) && e.sameHost(g.Gitea.API, "")
	case e.provider == prGitLab && g.GitLab != nil:
		return (g.GitLab.Project == e.projectID || strings.EqualFold(g.GitLab.Project, e.projectPath)) && e.sameHost(g.GitLab.API, "gitlab.com")
	case e.provider == prBitbucketServer && g.BitbucketServer != nil:
		return strings.EqualFold(g.BitbucketServer.Project, e.owner) && strings.EqualFold(g.BitbucketServer.Repo, e.repo)
	case e.provider == prBitbucketCloud && g.Bitbucket != nil:
		return strings.EqualFold(g.Bitbucket.Owner, e.owner) && strings.EqualFold(g.Bitbucket.Repo, e.repo)
	case e.provider == prAzureDevOps && g.AzureDevOps != nil:
		return g.AzureDevOps.Project == e.owner && g.AzureDevOps.Repo == e.repo
	}
	return false
}

// sameHost compares the generator's API host (def when it names none)
// with the event's, treating GitHub's api.<host> as <host>.
func (e *prEvent) sameHost(api, def string) bool {
	want := hostOf(api)
	if api == "" {
		want = def
	}
	if e.host == "" || want == "" {
		return true
	}
	return strings.TrimPrefix(want, "api.") == strings.TrimPrefix(e.host, "api.")
}

// hostOf is a URL's host name, lower case ("" when it has none).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
