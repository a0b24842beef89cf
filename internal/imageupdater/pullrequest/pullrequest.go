// Package pullrequest opens or updates the pull request (GitHub) or merge
// request (GitLab) of an image updater write-back, through each
// provider's own Go client library. A write-back keeps one branch per
// Application and base branch, rebuilt from the base with each new
// version, and one open request from it, whose title, description and
// labels follow the newest change: reviewers see one request per target
// branch, never a pile of stale ones.
package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

// Request is a pull request to open or bring up to date.
type Request struct {
	// Head is the branch holding the change; Base the branch it goes
	// into.
	Head, Base  string
	Title, Body string
	Labels      []string
}

// Result says which request holds the change.
type Result struct {
	// Number is the pull request's number (a merge request's IID).
	Number int64
	URL    string
	// Created is true when the request was opened now, false when an
	// open one was updated.
	Created bool
}

// Provider opens or updates requests on one repository.
type Provider interface {
	Ensure(ctx context.Context, r Request) (Result, error)
}

// Options configure New.
type Options struct {
	// Token authenticates to the provider's API: the password or token
	// of the write-back's HTTPS credentials.
	Token string
	// HTTPClient makes the API calls. Default: a client giving up after
	// 30 seconds.
	HTTPClient *http.Client
}

// defaultTimeout bounds an API call of the default HTTP client.
const defaultTimeout = 30 * time.Second

// Bounds of a request's text, as the providers take them.
const (
	maxTitle = 255
	maxBody  = 65536
)

// New returns the Provider of a write-back's pull request settings for
// the repository at repoURL (HTTPS; its path names owner/repository or
// the GitLab project).
func New(pr config.PullRequest, repoURL string, opts Options) (Provider, error) {
	if opts.Token == "" {
		return nil, errors.New("pull requests need a token: the write-back's credentials hold no password or token (SSH keys cannot open pull requests)")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: defaultTimeout}
	}
	u, err := url.Parse(repoURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("repository %q: pull requests need an HTTPS repository URL", repoURL)
	}
	if err := sameHost(pr.API, u); err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	switch pr.Provider {
	case config.ProviderGitHub:
		return newGitHub(pr.API, u, path, opts)
	case config.ProviderGitLab:
		return newGitLab(pr.API, u, path, opts)
	}
	return nil, fmt.Errorf("pull request provider %q: want github or gitlab", pr.Provider)
}

// bounded cuts a request's text to the providers' limits.
func bounded(r Request) Request {
	r.Title = cut(strings.TrimSpace(r.Title), maxTitle)
	r.Body = cut(r.Body, maxBody)
	return r
}

func cut(s string, runes int) string {
	if utf8.RuneCountInString(s) <= runes {
		return s
	}
	return string([]rune(s)[:runes])
}

// sameHost refuses an API address that is not where the repository is:
// another host than the repository's (or, for github.com,
// api.github.com), another port, or plain HTTP where the repository is
// reached over HTTPS. The token of the repository's credentials goes
// there, and an ImageUpdater's author must not be able to send it
// elsewhere, or in the clear.
func sameHost(api string, repo *url.URL) error {
	if api == "" {
		return nil
	}
	u, err := url.Parse(api)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("pull request API %q is not an HTTP(S) address", api)
	}
	if h := u.Hostname(); h != repo.Hostname() && h != "api."+repo.Hostname() {
		return fmt.Errorf("pull request API %s is not on the repository's host %s: the repository's token is only sent there", u.Host, repo.Hostname())
	}
	if u.Scheme != repo.Scheme {
		return fmt.Errorf("pull request API %s is reached over %s, the repository %s over %s: the repository's token is only sent the way its repository is reached", u.Host, u.Scheme, repo.Host, repo.Scheme)
	}
	if port(u) != port(repo) {
		return fmt.Errorf("pull request API %s is not on the repository's port %s: the repository's token is only sent there", u.Host, port(repo))
	}
	return nil
}

// port is an HTTP(S) address's port, explicit or implied by its scheme.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// apiBase is the API address: the one configured, else the repository's
// scheme and host with path.
func apiBase(configured string, repo *url.URL, path string) string {
	if configured != "" {
		return strings.TrimSuffix(configured, "/") + "/"
	}
	return repo.Scheme + "://" + repo.Host + path
}
