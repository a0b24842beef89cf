package scm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

func str(s string) *string { return &s }

// Argo CD's filters over a GitHub organization, through go-github against
// a local server speaking GitHub's API.
func TestListFilters(t *testing.T) {
	org := scmserver.GitHubOrg(t, "tok", "shop",
		scmserver.Repo{Name: "web", DefaultBranch: "main", Topics: []string{"deploy", "frontend"},
			Branches: map[string]string{"main": "a1a1a1a1a1", "release-1": "b2b2b2b2b2"},
			Files:    map[string][]string{"main": {"deploy/kustomization.yaml"}, "release-1": {"deploy/kustomization.yaml", "legacy.txt"}}},
		scmserver.Repo{Name: "api", DefaultBranch: "trunk", Topics: []string{"deploy"},
			Branches: map[string]string{"trunk": "c3c3c3c3c3"}, Files: map[string][]string{"trunk": {"README.md"}}},
		scmserver.Repo{Name: "old", DefaultBranch: "main", Archived: true, Topics: []string{"deploy"},
			Branches: map[string]string{"main": "d4d4d4d4d4"}, Files: map[string][]string{"main": {"deploy/x.yaml"}}},
	)
	p, err := GitHub(org.URL, "shop", "tok", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list := func(filters []v1alpha1.SCMProviderGeneratorFilter, protocol string, all bool) string {
		t.Helper()
		repos, err := List(ctx, p, filters, protocol, all)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range repos {
			out = append(out, r.Repository+"@"+r.Branch+"="+r.SHA[:4])
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name    string
		filters []v1alpha1.SCMProviderGeneratorFilter
		all     bool
		want    string
	}{
		{"default branches, archived left out", nil, false, "web@main=a1a1 api@trunk=c3c3"},
		{"every branch", nil, true, "web@main=a1a1 web@release-1=b2b2 api@trunk=c3c3"},
		{"repositoryMatch", []v1alpha1.SCMProviderGeneratorFilter{{RepositoryMatch: str("^a")}}, false, "api@trunk=c3c3"},
		{"labelMatch", []v1alpha1.SCMProviderGeneratorFilter{{LabelMatch: str("^frontend$")}}, false, "web@main=a1a1"},
		{"pathsExist", []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}}}, true, "web@main=a1a1 web@release-1=b2b2"},
		{"pathsDoNotExist", []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy/kustomization.yaml"}, PathsDoNotExist: []string{"legacy.txt"}}}, true, "web@main=a1a1"},
		{"branchMatch", []v1alpha1.SCMProviderGeneratorFilter{{BranchMatch: str("^release-")}}, true, "web@release-1=b2b2"},
		{"any filter", []v1alpha1.SCMProviderGeneratorFilter{{RepositoryMatch: str("^api$")}, {LabelMatch: str("frontend")}}, false, "web@main=a1a1 api@trunk=c3c3"},
	} {
		if got := list(c.filters, "", c.all); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	repos, err := List(ctx, p, nil, "https", false)
	if err != nil || !strings.HasPrefix(repos[0].URL, "https://") || repos[0].Labels[1] != "frontend" || repos[0].RepositoryID != 1 {
		t.Errorf("https: %+v %v", repos, err)
	}
	if _, err := List(ctx, p, nil, "ftp", false); err == nil {
		t.Error("cloneProtocol ftp was taken")
	}
	if _, err := List(ctx, p, []v1alpha1.SCMProviderGeneratorFilter{{BranchMatch: str("[")}}, "", false); err == nil || !strings.Contains(err.Error(), "filters[0].branchMatch") {
		t.Errorf("a bad filter: %v", err)
	}
	bad, _ := GitHub(org.URL, "shop", "wrong", false, nil)
	if _, err := bad.Repositories(ctx, ""); err == nil {
		t.Error("a wrong token was taken")
	} else if strings.Contains(fmt.Sprint(err), "wrong") {
		t.Errorf("the error shows the token: %v", err)
	}
}

// A GitLab group through its client-go against a local server speaking
// GitLab's API: projects by topic, archived left out, paths in the tree.
func TestGitLabGroup(t *testing.T) {
	group := scmserver.GitLabGroup(t, "tok", "platform/apps",
		scmserver.Repo{Name: "web", DefaultBranch: "main", Topics: []string{"deploy"},
			Branches: map[string]string{"main": "a1a1a1a1", "next": "b2b2b2b2"},
			Files:    map[string][]string{"main": {"charts/web/Chart.yaml"}, "next": {"README.md"}}},
		scmserver.Repo{Name: "tool", DefaultBranch: "main", Branches: map[string]string{"main": "c3c3c3c3"}},
		scmserver.Repo{Name: "old", DefaultBranch: "main", Topics: []string{"deploy"}, Archived: true, Branches: map[string]string{"main": "d4d4d4d4"}},
	)
	p, err := GitLab(group.URL, "platform/apps", "tok", GitLabOptions{Topic: "deploy"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := List(context.Background(), p, []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"charts/web"}}}, "https", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 1 || repos[0].Repository != "web" || repos[0].Branch != "main" || repos[0].SHA != "a1a1a1a1" ||
		repos[0].Organization != "platform/apps" || !strings.HasSuffix(repos[0].URL, "/platform/apps/web.git") || repos[0].RepositoryID != 1 {
		t.Errorf("repos %+v", repos)
	}
	all, err := GitLab(group.URL, "platform/apps", "tok", GitLabOptions{IncludeArchived: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if repos, err := List(context.Background(), all, nil, "", false); err != nil || len(repos) != 3 || !strings.HasPrefix(repos[0].URL, "git@") {
		t.Errorf("every project: %+v %v", repos, err)
	}
}
