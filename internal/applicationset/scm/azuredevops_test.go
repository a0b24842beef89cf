package scm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// An Azure DevOps team project through azure-devops-go-api against a
// local server speaking Azure DevOps' REST API, discovery included:
// disabled and empty repositories left out, clone URLs, default or every
// branch with its commit, items.
func TestAzureDevOpsProject(t *testing.T) {
	az := scmserver.AzureDevOps(t, "pat", "Contoso", "shop",
		scmserver.Repo{Name: "web", DefaultBranch: "main", Branches: map[string]string{"main": "a1a1a1a1", "release-1": "b2b2b2b2"},
			Files: map[string][]string{"main": {"deploy/kustomization.yaml"}, "release-1": {"legacy.txt"}}},
		scmserver.Repo{Name: "api", DefaultBranch: "trunk", Branches: map[string]string{"trunk": "c3c3c3c3"}},
		scmserver.Repo{Name: "old", DefaultBranch: "main", Archived: true, Branches: map[string]string{"main": "d4d4d4d4"}},
		scmserver.Repo{Name: "empty"},
	)
	p, err := AzureDevOps(az.URL, "Contoso", "shop", "pat", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repos, err := p.Repositories(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 2 || repos[0].Repository != "web" || repos[0].Organization != "Contoso" || repos[0].Branch != "main" ||
		!strings.HasPrefix(repos[0].URL, "https://") || !strings.HasSuffix(repos[0].URL, "/Contoso/shop/_git/web") || repos[1].Branch != "trunk" {
		t.Errorf("https (the default, as in Argo CD): %+v", repos)
	}
	if repos, err := p.Repositories(ctx, "ssh"); err != nil || !strings.HasPrefix(repos[0].URL, "git@ssh.") || !strings.HasSuffix(repos[0].URL, ":v3/Contoso/shop/web") {
		t.Errorf("ssh: %+v %v", repos, err)
	}
	if _, err := p.Repositories(ctx, "ftp"); err == nil {
		t.Error("cloneProtocol ftp was taken")
	}
	if got := listed(t, p, nil, false); got != "web@main=a1a1 api@trunk=c3c3" {
		t.Errorf("default branches: %s", got)
	}
	if got := listed(t, p, nil, true); got != "web@main=a1a1 web@release-1=b2b2 api@trunk=c3c3" {
		t.Errorf("every branch: %s", got)
	}
	web := Repository{Repository: "web", Branch: "main"}
	for _, c := range []struct {
		branch, path string
		want         bool
	}{{"main", "deploy/kustomization.yaml", true}, {"main", "deploy", true}, {"main", "/deploy", true}, {"main", "legacy.txt", false},
		{"release-1", "legacy.txt", true}, {"release-1", "deploy", false}} {
		web.Branch = c.branch
		if ok, err := p.HasPath(ctx, web, c.path); err != nil || ok != c.want {
			t.Errorf("HasPath %s on %s: %v %v, want %v", c.path, c.branch, ok, err, c.want)
		}
	}
	got := listed(t, p, []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}}}, true)
	if got != "web@main=a1a1" {
		t.Errorf("pathsExist: %s", got)
	}
	if bs, err := p.Branches(ctx, Repository{Repository: "old", Branch: "main"}, false); err != nil || len(bs) != 0 {
		t.Errorf("a disabled repository's branches: %+v %v", bs, err)
	}
}

// listed lists p through List, each branch as repo@branch=sha[:4].
func listed(t *testing.T, p Provider, filters []v1alpha1.SCMProviderGeneratorFilter, all bool) string {
	t.Helper()
	repos, err := List(context.Background(), p, filters, "", all)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range repos {
		out = append(out, r.Repository+"@"+r.Branch+"="+r.SHA[:min(4, len(r.SHA))])
	}
	return strings.Join(out, " ")
}

// Branch refs page by continuation tokens; an endless chain ends in an
// error, as do a wrong token (not shown) and a missing project.
func TestAzureDevOpsPaging(t *testing.T) {
	branches := map[string]string{}
	for i := range 150 {
		branches[fmt.Sprintf("b%03d", i)] = fmt.Sprintf("%040d", i)
	}
	az := scmserver.AzureDevOps(t, "pat", "contoso", "shop", scmserver.Repo{Name: "many", DefaultBranch: "b000", Branches: branches})
	p, err := AzureDevOps(az.URL+"/", "contoso", "shop", "pat", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo := Repository{Repository: "many", Branch: "b000"}
	bs, err := p.Branches(ctx, repo, true)
	if err != nil || len(bs) != 150 || bs[149].Branch != "b149" || bs[149].SHA != fmt.Sprintf("%040d", 149) {
		t.Fatalf("two pages of refs: %d %v", len(bs), err)
	}
	az.SetEndless(true)
	_, err = p.Branches(ctx, repo, true)
	if err == nil || !strings.Contains(err.Error(), "more than 1000") {
		t.Errorf("an endless chain: %v", err)
	}
	bad, _ := AzureDevOps(az.URL, "contoso", "shop", "wrong-pat", nil)
	_, err = bad.Repositories(ctx, "")
	if err == nil || strings.Contains(err.Error(), "wrong-pat") {
		t.Errorf("a wrong token: %v", err)
	}
	missing, _ := AzureDevOps(az.URL, "contoso", "nope", "pat", nil)
	if _, err := missing.Repositories(ctx, ""); err == nil || !strings.Contains(err.Error(), "Azure DevOps project contoso/nope: listing repositories: ") {
		t.Errorf("a missing project: %v", err)
	}
	if _, err := AzureDevOps(az.URL, "contoso", "shop", "", nil); err == nil {
		t.Error("no token was taken")
	}
}
