package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// bitbucketCounter is a transport that counts the requests it carries.
type bitbucketCounter struct{ n atomic.Int64 }

// RoundTrip implements http.RoundTripper.
func (c *bitbucketCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// bitbucketShop fills repository shop of a Bitbucket fake with three
// requests and closes the second.
func bitbucketShop(bb *scmserver.Bitbucket) {
	bb.AddPullRequest("shop", scmserver.PullRequest{Head: "feature/a", Base: "main", Title: "A", HeadSHA: "aaa", Author: "ana"})
	bb.AddPullRequest("shop", scmserver.PullRequest{Head: "feature/b", Base: "main", Title: "B", HeadSHA: "bbb", Author: "bo"})
	bb.AddPullRequest("shop", scmserver.PullRequest{Head: "fix/c", Base: "release", Title: "C", HeadSHA: "ccc", Author: "cy"})
	bb.ClosePullRequest("shop", 2)
}

// bitbucketShopRepo is the repository bitbucketShop fills.
var bitbucketShopRepo = scmserver.Repo{Name: "shop", DefaultBranch: "main", Branches: map[string]string{"main": "m0", "release": "r0"}}

// Bitbucket Server's open pull requests through go-bitbucket-v1 against
// a local server speaking its REST API 1.0 (newest first, as it lists).
func TestBitbucketServerPullRequests(t *testing.T) {
	ctx := context.Background()
	bb := scmserver.BitbucketServer(t, scmserver.BitbucketAuth{Username: "ann", Password: "s3cret"}, "PRJ", bitbucketShopRepo)
	bitbucketShop(bb)
	hc := &http.Client{Transport: &bitbucketCounter{}}
	svc, err := BitbucketServer(bb.URL, "PRJ", "shop", Auth{Username: "ann", Password: "s3cret"}, hc)
	if err != nil {
		t.Fatal(err)
	}
	const want = "[{3 C fix/c release ccc cy []} {1 A feature/a main aaa ana []}]"
	if prs, err := svc.List(ctx); err != nil || fmt.Sprint(prs) != want {
		t.Errorf("listed %v %v, want %s", prs, err, want)
	}
	if hc.Transport.(*bitbucketCounter).n.Load() == 0 {
		t.Error("the HTTP client given was not used")
	}
	bb.SetPageSize(1)
	before := hc.Transport.(*bitbucketCounter).n.Load()
	if prs, err := svc.List(ctx); err != nil || fmt.Sprint(prs) != want {
		t.Errorf("one a page: %v %v", prs, err)
	}
	if calls := hc.Transport.(*bitbucketCounter).n.Load() - before; calls != 2 {
		t.Errorf("one a page: %d calls, want 2", calls)
	}
	missing, _ := BitbucketServer(bb.URL, "PRJ", "none", Auth{Username: "ann", Password: "s3cret"}, nil)
	if _, err := missing.List(ctx); !errors.Is(err, ErrRepositoryNotFound) {
		t.Errorf("a missing repository: %v", err)
	}
	bad, _ := BitbucketServer(bb.URL, "PRJ", "shop", Auth{Username: "ann", Password: "wrong"}, nil)
	if _, err := bad.List(ctx); err == nil || errors.Is(err, ErrRepositoryNotFound) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong password: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := svc.List(cancelled); err == nil {
		t.Error("a cancelled context was not honoured")
	}
	bb.SetPageSize(0)
	bb.SetEndless(true)
	if _, err := svc.List(ctx); err == nil || !strings.Contains(err.Error(), "more than 5000 open pull requests") {
		t.Errorf("an endless page chain: %v", err)
	}
}

// A Bitbucket Server token is sent as a bearer token.
func TestBitbucketServerPullRequestsToken(t *testing.T) {
	bb := scmserver.BitbucketServer(t, scmserver.BitbucketAuth{Token: "tok"}, "PRJ", bitbucketShopRepo)
	bitbucketShop(bb)
	svc, _ := BitbucketServer(bb.URL+"/rest", "PRJ", "shop", Auth{BearerToken: "tok"}, nil)
	if prs, err := svc.List(context.Background()); err != nil || len(prs) != 2 {
		t.Errorf("listed %v %v", prs, err)
	}
	anonymous, _ := BitbucketServer(bb.URL, "PRJ", "shop", Auth{}, nil)
	if _, err := anonymous.List(context.Background()); err == nil {
		t.Error("an anonymous call was let in")
	}
}

// Bitbucket Cloud's open pull requests through go-bitbucket against a
// local server speaking its REST API 2.0.
func TestBitbucketCloudPullRequests(t *testing.T) {
	ctx := context.Background()
	bb := scmserver.BitbucketCloud(t, scmserver.BitbucketAuth{Username: "ann", Password: "app-pass"}, "team", bitbucketShopRepo)
	bitbucketShop(bb)
	hc := &http.Client{Transport: &bitbucketCounter{}}
	svc, err := BitbucketCloud(bb.URL, "team", "shop", Auth{Username: "ann", Password: "app-pass"}, hc)
	if err != nil {
		t.Fatal(err)
	}
	const want = "[{1 A feature/a main aaa ana []} {3 C fix/c release ccc cy []}]"
	if prs, err := svc.List(ctx); err != nil || fmt.Sprint(prs) != want {
		t.Errorf("listed %v %v, want %s", prs, err, want)
	}
	if hc.Transport.(*bitbucketCounter).n.Load() == 0 {
		t.Error("the HTTP client given was not used")
	}
	bb.SetPageSize(1)
	before := hc.Transport.(*bitbucketCounter).n.Load()
	if prs, err := svc.List(ctx); err != nil || fmt.Sprint(prs) != want {
		t.Errorf("one a page: %v %v", prs, err)
	}
	if calls := hc.Transport.(*bitbucketCounter).n.Load() - before; calls != 2 {
		t.Errorf("one a page: %d calls, want 2", calls)
	}
	missing, _ := BitbucketCloud(bb.URL, "team", "none", Auth{Username: "ann", Password: "app-pass"}, nil)
	if _, err := missing.List(ctx); !errors.Is(err, ErrRepositoryNotFound) {
		t.Errorf("a missing repository: %v", err)
	}
	bad, _ := BitbucketCloud(bb.URL, "team", "shop", Auth{Username: "ann", Password: "wrong"}, nil)
	if _, err := bad.List(ctx); err == nil || errors.Is(err, ErrRepositoryNotFound) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong password: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := svc.List(cancelled); err == nil {
		t.Error("a cancelled context was not honoured")
	}
	bb.SetEndless(true)
	if _, err := svc.List(ctx); err == nil || !strings.Contains(err.Error(), "go on past 101 pages") {
		t.Errorf("an endless chain of small pages: %v", err)
	}
	bb.SetPageSize(0)
	if _, err := svc.List(ctx); err == nil || !strings.Contains(err.Error(), "more than 5000 open pull requests") {
		t.Errorf("an endless page chain: %v", err)
	}
}

// A Bitbucket Cloud token is sent as a bearer token.
func TestBitbucketCloudPullRequestsToken(t *testing.T) {
	bb := scmserver.BitbucketCloud(t, scmserver.BitbucketAuth{Token: "tok"}, "team", bitbucketShopRepo)
	bitbucketShop(bb)
	svc, _ := BitbucketCloud(bb.URL+"/", "team", "shop", Auth{BearerToken: "tok"}, nil)
	if prs, err := svc.List(context.Background()); err != nil || len(prs) != 2 {
		t.Errorf("listed %v %v", prs, err)
	}
	anonymous, _ := BitbucketCloud(bb.URL, "team", "shop", Auth{}, nil)
	if _, err := anonymous.List(context.Background()); err == nil {
		t.Error("an anonymous call was let in")
	}
}

// TestBitbucketCloudNextLinkElsewhere: a page whose next link names
// another server ends the listing with an error, and that server never
// sees the credentials.
func TestBitbucketCloudNextLinkElsewhere(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization") != "")
		_, _ = w.Write([]byte(`{"values":[]}`))
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"values":[{"id":1,"title":"t"}],"next":%q}`, other.URL+"/2.0/repositories/team/web/pullrequests?page=2")
	}))
	defer api.Close()
	svc, err := BitbucketCloud(api.URL+"/2.0", "team", "web", Auth{Username: "bot", Password: "s3cret"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.List(context.Background()); err == nil {
		t.Error("a next link to another server was followed without error")
	}
	if leaked.Load() {
		t.Error("the credentials reached another server")
	}
}
