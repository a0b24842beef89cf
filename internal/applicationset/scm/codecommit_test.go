package scm

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// awsEnv gives the SDK's default chain static credentials and no shared
// files or instance metadata to read.
func awsEnv(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "eu-west-1",
		"AWS_PROFILE": "", "AWS_CA_BUNDLE": "", "AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": ""} {
		t.Setenv(k, v)
	}
}

// codeCommitRepos are an account's repositories: tags in Topics.
func codeCommitRepos() []scmserver.Repo {
	return []scmserver.Repo{
		{Name: "web", DefaultBranch: "main", Topics: []string{"team=platform", "deploy"},
			Branches: map[string]string{"main": "a1a1a1a1", "release-1": "b2b2b2b2"},
			Files:    map[string][]string{"main": {"deploy/kustomization.yaml", "README.md"}, "release-1": {"legacy.txt"}}},
		{Name: "api", DefaultBranch: "trunk", Topics: []string{"team=data"}, Branches: map[string]string{"trunk": "c3c3c3c3"}},
		{Name: "empty", Topics: []string{"team=platform"}},
		{Name: "plain", DefaultBranch: "main", Branches: map[string]string{"main": "d4d4d4d4"}},
	}
}

// CodeCommit through the AWS SDK against a local server speaking
// CodeCommit's and the tagging API's JSON protocol: accounts, clone URLs
// of the three protocols, tags as labels, branches with commits, paths.
func TestCodeCommitRepositories(t *testing.T) {
	awsEnv(t)
	cc := scmserver.AWSCodeCommit(t, "123456789012", "eu-west-1", codeCommitRepos()...)
	ctx := context.Background()
	p, err := CodeCommit(ctx, CodeCommitOptions{Endpoint: cc.URL})
	if err != nil {
		t.Fatal(err)
	}
	repos, err := p.Repositories(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 3 || repos[0].Repository != "web" || repos[0].Organization != "123456789012" || repos[0].Branch != "main" ||
		repos[0].URL != "ssh://git-codecommit.eu-west-1.amazonaws.com/v1/repos/web" ||
		!slices.Equal(repos[0].Labels, []string{"team=platform", "deploy"}) || repos[2].Repository != "plain" || repos[2].Labels != nil {
		t.Errorf("ssh, empty repository left out: %+v", repos)
	}
	for protocol, want := range map[string]string{"https": "https://git-codecommit.eu-west-1", "https-fips": "https://git-codecommit-fips.eu-west-1"} {
		if repos, err := p.Repositories(ctx, protocol); err != nil || !strings.HasPrefix(repos[1].URL, want+".amazonaws.com/v1/repos/api") {
			t.Errorf("%s: %+v %v", protocol, repos, err)
		}
	}
	if _, err := p.Repositories(ctx, "ftp"); err == nil {
		t.Error("cloneProtocol ftp was taken")
	}
	if got := listed(t, p, nil, false); got != "web@main=a1a1 api@trunk=c3c3 plain@main=d4d4" {
		t.Errorf("default branches: %s", got)
	}
	if got := listed(t, p, []v1alpha1.SCMProviderGeneratorFilter{{LabelMatch: str("^team=")}}, true); got != "web@main=a1a1 web@release-1=b2b2 api@trunk=c3c3" {
		t.Errorf("every branch of the labelled: %s", got)
	}
	web := Repository{Organization: "123456789012", Repository: "web"}
	for _, c := range []struct {
		branch, path string
		want         bool
	}{{"main", "deploy/kustomization.yaml", true}, {"main", "deploy", true}, {"main", "/deploy/", true}, {"main", "README.md", true},
		{"main", "/", true}, {"main", "legacy.txt", false}, {"main", "deploy/other.yaml", false}, {"main", "nope/x.yaml", false},
		{"release-1", "legacy.txt", true}, {"release-1", "deploy", false}, {"gone", "README.md", false}} {
		web.Branch = c.branch
		if ok, err := p.HasPath(ctx, web, c.path); err != nil || ok != c.want {
			t.Errorf("HasPath %s on %s: %v %v, want %v", c.path, c.branch, ok, err, c.want)
		}
	}
	if _, err := p.Branches(ctx, Repository{Organization: "123456789012", Repository: "nope", Branch: "main"}, false); err == nil ||
		!strings.Contains(err.Error(), "AWS CodeCommit repository 123456789012/nope: reading branch main: ") {
		t.Errorf("a missing repository: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Repositories(cancelled, ""); err == nil {
		t.Error("a cancelled context was not honoured")
	}
}

// Tag filters go to the Resource Groups Tagging API: a key's values
// merge, every key must match; repositories without a default branch are
// still left out.
func TestCodeCommitTagFilters(t *testing.T) {
	awsEnv(t)
	cc := scmserver.AWSCodeCommit(t, "123456789012", "eu-west-1", codeCommitRepos()...)
	ctx := context.Background()
	for _, c := range []struct {
		filters []*v1alpha1.TagFilter
		want    string
	}{
		{[]*v1alpha1.TagFilter{{Key: "team", Value: "platform"}}, "web"},
		{[]*v1alpha1.TagFilter{{Key: "team"}}, "web api"},
		{[]*v1alpha1.TagFilter{{Key: "team", Value: "platform"}, {Key: "team", Value: "data"}}, "web api"},
		{[]*v1alpha1.TagFilter{{Key: "team"}, {Key: "deploy"}}, "web"},
		{[]*v1alpha1.TagFilter{{Key: "team", Value: "none"}}, ""},
	} {
		p, err := CodeCommit(ctx, CodeCommitOptions{Region: "eu-west-1", TagFilters: c.filters, Endpoint: cc.URL})
		if err != nil {
			t.Fatal(err)
		}
		repos, err := p.Repositories(ctx, "https")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range repos {
			names = append(names, r.Repository)
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("tag filters %v: %s, want %s", c.filters, got, c.want)
		}
	}
}

// Listings page by tokens; an endless chain ends in an error. An
// assumed role's credentials sign every call after STS's.
func TestCodeCommitPagingAndRole(t *testing.T) {
	awsEnv(t)
	cc := scmserver.AWSCodeCommit(t, "123456789012", "eu-west-1", codeCommitRepos()...)
	cc.SetPageSize(1)
	ctx := context.Background()
	role := "arn:aws:iam::123456789012:role/discovery"
	p, err := CodeCommit(ctx, CodeCommitOptions{Role: role, Endpoint: cc.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got := listed(t, p, nil, true); got != "web@main=a1a1 web@release-1=b2b2 api@trunk=c3c3 plain@main=d4d4" {
		t.Errorf("one item a page: %s", got)
	}
	calls := cc.Calls()
	pages := map[string]int{}
	for i, c := range calls {
		pages[c.Action]++
		if i == 0 && (c.Action != "AssumeRole" || c.AccessKey != "AKIDTEST" || c.RoleARN != role) ||
			i > 0 && c.AccessKey != scmserver.AssumedAccessKey {
			t.Errorf("call %d: %+v", i, c)
		}
	}
	if pages["CodeCommit_20150413.ListRepositories"] != 4 || pages["ResourceGroupsTaggingAPI_20170126.GetResources"] != 3 ||
		pages["CodeCommit_20150413.ListBranches"] != 4 || pages["AssumeRole"] != 1 {
		t.Errorf("pages read: %v", pages)
	}
	cc.SetPageSize(100)
	cc.SetEndless(true)
	if _, err := p.Branches(ctx, Repository{Repository: "web", Branch: "main"}, true); err == nil || !strings.Contains(err.Error(), "more than 1000") {
		t.Errorf("an endless chain of branches: %v", err)
	}
	if _, err := p.Repositories(ctx, ""); err == nil || !strings.Contains(err.Error(), "more than 5000") {
		t.Errorf("an endless chain of repositories: %v", err)
	}
}
