package scm

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// bitbucketRepos are Web (two branches, a deploy directory on both and
// legacy.txt on release-1), api (one branch) and empty (no default
// branch, as an empty repository).
func bitbucketRepos() []scmserver.Repo {
	return []scmserver.Repo{
		{Name: "Web", DefaultBranch: "main", Branches: map[string]string{"main": "a1a1a1a1a1", "release-1": "b2b2b2b2b2"},
			Files: map[string][]string{"main": {"deploy/kustomization.yaml"}, "release-1": {"deploy/kustomization.yaml", "legacy.txt"}}},
		{Name: "api", DefaultBranch: "trunk", Branches: map[string]string{"trunk": "c3c3c3c3c3"}, Files: map[string][]string{"trunk": {"README.md"}}},
		{Name: "empty"},
	}
}

// bitbucketListed is List's answer in short: repository@branch=sha prefix.
func bitbucketListed(t *testing.T, p Provider, filters []v1alpha1.SCMProviderGeneratorFilter, all bool) string {
	t.Helper()
	repos, err := List(context.Background(), p, filters, "", all)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range repos {
		out = append(out, r.Repository+"@"+r.Branch+"="+r.SHA[:4])
	}
	return strings.Join(out, " ")
}

// bitbucketCounter is a transport that counts the requests it carries.
type bitbucketCounter struct{ n atomic.Int64 }

// RoundTrip implements http.RoundTripper.
func (c *bitbucketCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// bitbucketListings checks List through p, without and with every branch and
// with path filters (a file, a directory, a file that must be missing).
func bitbucketListings(t *testing.T, p Provider, web, api string) {
	t.Helper()
	for _, c := range []struct {
		name    string
		filters []v1alpha1.SCMProviderGeneratorFilter
		all     bool
		want    string
	}{
		{"default branches, none left out", nil, false, web + "@main=a1a1 " + api + "@trunk=c3c3"},
		{"every branch", nil, true, web + "@main=a1a1 " + web + "@release-1=b2b2 " + api + "@trunk=c3c3"},
		{"a file exists", []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy/kustomization.yaml"}}}, true, web + "@main=a1a1 " + web + "@release-1=b2b2"},
		{"a directory exists", []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy/"}}}, false, web + "@main=a1a1"},
		{"a file does not", []v1alpha1.SCMProviderGeneratorFilter{{PathsExist: []string{"deploy"}, PathsDoNotExist: []string{"legacy.txt"}}}, true, web + "@main=a1a1"},
		{"branchMatch", []v1alpha1.SCMProviderGeneratorFilter{{BranchMatch: str("^release-")}}, true, web + "@release-1=b2b2"},
	} {
		if got := bitbucketListed(t, p, c.filters, c.all); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// Bitbucket Server through go-bitbucket-v1 against a local server
// speaking its REST API 1.0.
func TestBitbucketServer(t *testing.T) {
	repos := append(bitbucketRepos(), scmserver.Repo{Name: "gone", DefaultBranch: "main"})
	bb := scmserver.BitbucketServer(t, scmserver.BitbucketAuth{Username: "ann", Password: "s3cret"}, "PRJ", repos...)
	host := strings.TrimPrefix(bb.URL, "http://")
	hc := &http.Client{Transport: &bitbucketCounter{}}
	p, err := BitbucketServer(bb.URL, "PRJ", Auth{Username: "ann", Password: "s3cret"}, false, hc)
	if err != nil {
		t.Fatal(err)
	}
	bitbucketListings(t, p, "Web", "api")
	if hc.Transport.(*bitbucketCounter).n.Load() == 0 {
		t.Error("the HTTP client given was not used")
	}
	ctx := context.Background()
	for protocol, want := range map[string]string{"": "ssh://git@" + host + "/prj/web.git", "ssh": "ssh://git@" + host + "/prj/web.git", "https": "http://" + host + "/scm/prj/web.git"} {
		got, err := List(ctx, p, nil, protocol, false)
		if err != nil || len(got) != 2 || got[0].URL != want || got[0].Organization != "PRJ" || got[0].Repository != "Web" ||
			got[0].RepositoryID != 1 || got[0].Labels == nil || len(got[0].Labels) != 0 || got[1].RepositoryID != 2 {
			t.Errorf("cloneProtocol %q: %+v %v", protocol, got, err)
		}
	}
	if _, err := List(ctx, p, nil, "ftp", false); err == nil {
		t.Error("cloneProtocol ftp was taken")
	}
	all, _ := BitbucketServer(bb.URL+"/rest/", "PRJ", Auth{Username: "ann", Password: "s3cret"}, true, nil)
	if got := bitbucketListed(t, all, nil, false); got != "Web@main=a1a1 Web@release-1=b2b2 api@trunk=c3c3" {
		t.Errorf("allBranches: %s", got)
	}
	bb.SetPageSize(1)
	bitbucketListings(t, p, "Web", "api")
	before := hc.Transport.(*bitbucketCounter).n.Load()
	if _, err := p.Repositories(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if calls := hc.Transport.(*bitbucketCounter).n.Load() - before; calls != 8 {
		t.Errorf("one a page: %d calls, want 8 (4 pages, 4 default branches)", calls)
	}
	listedWeb := Repository{Repository: "Web", RepositoryID: 1} // its slug is web
	bb.SetEndless(true)
	if _, err := p.Repositories(ctx, ""); err == nil || !strings.Contains(err.Error(), "Bitbucket Server project PRJ repositories: more than 5000") {
		t.Errorf("an endless page chain: %v", err)
	}
	if _, err := p.Branches(ctx, listedWeb, true); err == nil || !strings.Contains(err.Error(), "Bitbucket Server repository PRJ/web branches: more than 1000") {
		t.Errorf("an endless branch chain: %v", err)
	}
	bad, _ := BitbucketServer(bb.URL, "PRJ", Auth{Username: "ann", Password: "wrong"}, false, nil)
	if _, err := bad.Repositories(ctx, ""); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong password: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Repositories(cancelled, ""); err == nil {
		t.Error("a cancelled context was not honoured")
	}
}

// A Bitbucket Server token is sent as a bearer token; HasPath on its own.
func TestBitbucketServerToken(t *testing.T) {
	bb := scmserver.BitbucketServer(t, scmserver.BitbucketAuth{Token: "tok"}, "PRJ", bitbucketRepos()...)
	p, err := BitbucketServer(bb.URL, "PRJ", Auth{BearerToken: "tok"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := p.Repositories(context.Background(), "")
	if err != nil || len(repos) != 2 {
		t.Fatalf("repositories %+v %v", repos, err)
	}
	web := repos[0] // Web, whose slug is web
	web.Branch = "release-1"
	for path, want := range map[string]bool{"legacy.txt": true, "deploy": true, "/deploy/": true, "deploy/kustomization.yaml": true, "missing": false, "deploy/x": false} {
		if got, err := p.HasPath(context.Background(), web, path); err != nil || got != want {
			t.Errorf("HasPath %s: %v %v, want %v", path, got, err, want)
		}
	}
	anonymous, _ := BitbucketServer(bb.URL, "PRJ", Auth{}, false, nil)
	if _, err := anonymous.HasPath(context.Background(), web, "legacy.txt"); err == nil {
		t.Error("an anonymous call was let in")
	}
}

// Bitbucket Cloud through go-bitbucket against a local server speaking
// its REST API 2.0.
func TestBitbucketCloud(t *testing.T) {
	bb := scmserver.BitbucketCloud(t, scmserver.BitbucketAuth{Username: "ann", Password: "app-pass"}, "team", bitbucketRepos()...)
	host := strings.TrimPrefix(strings.TrimSuffix(bb.URL, "/2.0"), "http://")
	hc := &http.Client{Transport: &bitbucketCounter{}}
	p, err := BitbucketCloud(bb.URL, "team", Auth{Username: "ann", Password: "app-pass"}, false, hc)
	if err != nil {
		t.Fatal(err)
	}
	bitbucketListings(t, p, "web", "api")
	if hc.Transport.(*bitbucketCounter).n.Load() == 0 {
		t.Error("the HTTP client given was not used")
	}
	ctx := context.Background()
	for protocol, want := range map[string]string{"": "git@" + host + ":team/web.git", "ssh": "git@" + host + ":team/web.git", "https": "https://" + host + "/team/web.git"} {
		got, err := List(ctx, p, nil, protocol, false)
		if err != nil || len(got) != 2 || got[0].URL != want || got[0].Organization != "team" || got[0].Repository != "web" ||
			got[0].Labels == nil || len(got[0].Labels) != 0 {
			t.Errorf("cloneProtocol %q: %+v %v", protocol, got, err)
		}
	}
	if _, err := List(ctx, p, nil, "ftp", false); err == nil {
		t.Error("cloneProtocol ftp was taken")
	}
	all, _ := BitbucketCloud(bb.URL+"/", "team", Auth{Username: "ann", Password: "app-pass"}, true, nil)
	if got := bitbucketListed(t, all, nil, false); got != "web@main=a1a1 web@release-1=b2b2 api@trunk=c3c3" {
		t.Errorf("allBranches: %s", got)
	}
	web := Repository{Repository: "web", Branch: "release-1", SHA: "b2b2b2b2b2"}
	for path, want := range map[string]bool{"legacy.txt": true, "deploy": true, "deploy/kustomization.yaml": true, "missing": false} {
		if got, err := p.HasPath(ctx, web, path); err != nil || got != want {
			t.Errorf("HasPath %s: %v %v, want %v", path, got, err, want)
		}
	}
	bb.SetPageSize(1)
	bitbucketListings(t, p, "web", "api")
	before := hc.Transport.(*bitbucketCounter).n.Load()
	if _, err := p.Repositories(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if calls := hc.Transport.(*bitbucketCounter).n.Load() - before; calls != 3 {
		t.Errorf("one a page: %d calls, want 3 (3 pages of a listing of size 3)", calls)
	}
	bb.SetEndless(true)
	if _, err := p.Repositories(ctx, ""); err == nil || !strings.Contains(err.Error(), "Bitbucket Cloud workspace team repositories: more than 5000") {
		t.Errorf("an endless page chain: %v", err)
	}
	if _, err := p.Branches(ctx, Repository{Repository: "web"}, true); err == nil || !strings.Contains(err.Error(), "more than 1000") {
		t.Errorf("an endless branch chain: %v", err)
	}
	bad, _ := BitbucketCloud(bb.URL, "team", Auth{Username: "ann", Password: "wrong"}, false, nil)
	if _, err := bad.Repositories(ctx, ""); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong password: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Repositories(cancelled, ""); err == nil {
		t.Error("a cancelled context was not honoured")
	}
}

// A Bitbucket Cloud token is sent as a bearer token.
func TestBitbucketCloudToken(t *testing.T) {
	bb := scmserver.BitbucketCloud(t, scmserver.BitbucketAuth{Token: "tok"}, "team", bitbucketRepos()...)
	p, err := BitbucketCloud(bb.URL, "team", Auth{BearerToken: "tok"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := bitbucketListed(t, p, nil, false); got != "web@main=a1a1 api@trunk=c3c3" {
		t.Errorf("listed %s", got)
	}
	if _, err := BitbucketCloud("not a URL", "team", Auth{}, false, nil); err == nil {
		t.Error("a relative API address was taken")
	}
}
