package pullrequest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ktrysmt/go-bitbucket"
)

// Bitbucket Cloud's paging: the library follows each answer's next link
// itself, cloudPageSize requests a page, up to cloudPages pages.
const (
	cloudAPI      = "https://api.bitbucket.org/2.0"
	cloudPageSize = 50
	cloudPages    = MaxPullRequests/cloudPageSize + 1
)

// bitbucketCloudRepo lists a Bitbucket Cloud repository's open pull
// requests through its REST API 2.0. The library makes its requests
// without a context, so ctx is checked before the listing; the HTTP
// client's timeout bounds each call.
type bitbucketCloudRepo struct {
	client      *bitbucket.Client
	owner, repo string
}

// BitbucketCloud returns the Service of repository repo (its slug) of
// workspace owner; api is the API's address (empty: Bitbucket Cloud's).
// Labels are empty: Bitbucket has none.
func BitbucketCloud(api, owner, repo string, auth Auth, hc *http.Client) (Service, error) {
	where := fmt.Sprintf("Bitbucket Cloud client for %s/%s", owner, repo)
	base, err := url.Parse(strings.TrimSuffix(cmp.Or(api, cloudAPI), "/"))
	if err != nil {
		return nil, fmt.Errorf("%s: API address: %w", where, err)
	}
	if base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("%s: API address %q: want an absolute URL", where, api)
	}
	var c *bitbucket.Client
	if auth.basic() {
		c, err = bitbucket.NewBasicAuth(auth.Username, auth.Password)
	} else {
		c, err = bitbucket.NewOAuthbearerToken(auth.BearerToken)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	c.SetApiBaseURL(*base)
	c.HttpClient = pinnedHost(httpClient(hc), base.Host)
	c.Pagelen, c.LimitPages = cloudPageSize, cloudPages
	return &bitbucketCloudRepo{client: c, owner: owner, repo: repo}, nil
}

// cloudPull is the part of a Bitbucket Cloud pull request the generator
// reads.
type cloudPull struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Source struct {
		Branch struct {
			Name string `json:"name"`
		} `json:"branch"`
		Commit struct {
			Hash string `json:"hash"`
		} `json:"commit"`
	} `json:"source"`
	Destination struct {
		Branch struct {
			Name string `json:"name"`
		} `json:"branch"`
	} `json:"destination"`
	Author struct {
		Nickname string `json:"nickname"`
	} `json:"author"`
}

// cloudListing is a listing as the library hands it back: every page's
// values, and the next link of the last page it read (set when it
// stopped at its page limit).
type cloudListing struct {
	Values []cloudPull `json:"values"`
	Next   string      `json:"next"`
}

// List implements Service: the open requests, as Argo CD reads them (the
// author being the nickname).
func (b *bitbucketCloudRepo) List(ctx context.Context) ([]PullRequest, error) {
	where := fmt.Sprintf("Bitbucket Cloud repository %s/%s", b.owner, b.repo)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: listing pull requests: %w", where, err)
	}
	raw, err := b.client.Repositories.PullRequests.Gets(&bitbucket.PullRequestsOptions{Owner: b.owner, RepoSlug: b.repo, States: []string{"OPEN"}})
	var status *bitbucket.UnexpectedResponseStatusError
	if errors.As(err, &status) && status.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%s: %w", where, ErrRepositoryNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: listing pull requests: %w", where, err)
	}
	listing, err := decodeListing(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: reading pull requests: %w", where, err)
	}
	if len(listing.Values) > MaxPullRequests {
		return nil, errTooMany(where)
	}
	if listing.Next != "" && len(listing.Values) > 0 {
		return nil, fmt.Errorf("%s: the pull requests go on past %d pages; the generator stops there", where, cloudPages)
	}
	out := make([]PullRequest, 0, len(listing.Values))
	for _, p := range listing.Values {
		out = append(out, PullRequest{Number: p.ID, Title: p.Title, Branch: p.Source.Branch.Name, TargetBranch: p.Destination.Branch.Name,
			HeadSHA: p.Source.Commit.Hash, Author: p.Author.Nickname, Labels: []string{}})
	}
	return out, nil
}

// decodeListing reads the library's untyped answer.
func decodeListing(raw any) (cloudListing, error) {
	var l cloudListing
	data, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(data, &l)
	}
	return l, err
}

// pinnedHost is hc refusing requests to any host but host: the library
// follows the next links the answers name, which must never take the
// credentials to another server.
func pinnedHost(hc *http.Client, host string) *http.Client {
	c := *hc
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host != host {
			return nil, fmt.Errorf("refusing a request to %s: the API is at %s", r.URL.Host, host)
		}
		return next.RoundTrip(r)
	})
	return &c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
