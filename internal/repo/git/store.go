package git

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configure a Store.
type Options struct {
	// Root holds the bare clones and checkouts. Required.
	Root string
	// RefsTTL is how long an ls-remote result is reused. Default 3s: long
	// enough that a thousand Applications on one repository share one
	// ls-remote per refresh, short enough that a push is seen on the next one.
	RefsTTL time.Duration
	// GitBinary is the git executable. Default "git" from PATH.
	GitBinary string
	// MaxCheckoutBytes bounds the file content of one checkout. Default
	// 2 GiB; a larger commit fails to check out rather than fill the disk.
	MaxCheckoutBytes int64
	// RequestTimeout bounds one ls-remote, the request that asks a remote
	// for its refs (Argo CD's ARGOCD_GIT_REQUEST_TIMEOUT). Default 0:
	// only the caller's context; `capstan repo-server` sets Argo CD's 15s.
	RequestTimeout time.Duration
	// Observe, if set, hears of each request made to a remote, when it
	// ends (Argo CD's argocd_git_request_* metrics). Default: none.
	Observe func(Request)
	// Waiting, if set, hears of each caller that starts (delta 1) and stops
	// (-1) waiting for a repository's lock, which fetches and checkouts
	// hold (Argo CD's argocd_repo_pending_request_total), with the URL
	// as RedactURL gives it. Default: none.
	Waiting func(url string, delta int)
	// LsRemoteParallelism bounds the ls-remotes running at once across
	// the store, as Argo CD's reposerver.git.lsremote.parallelism.limit;
	// the others wait their turn. Default 0: no bound.
	LsRemoteParallelism int
	// NoBuiltinConfig leaves out the configuration that keeps git's
	// automatic gc and maintenance in the foreground, as Argo CD's
	// reposerver.enable.builtin.git.config set to false. Default false:
	// it is set.
	NoBuiltinConfig bool
}

// RequestKind is the kind of a request to a remote, named as Argo CD's
// request_type label names it.
type RequestKind string

// The requests a Repo makes to its remote.
const (
	RequestLsRemote RequestKind = "ls-remote"
	RequestFetch    RequestKind = "fetch"
	// RequestPush is a Writer's push.
	RequestPush RequestKind = "push"
)

// Request is one request made to a remote.
type Request struct {
	// URL is the repository's, with any credentials left out.
	URL  string
	Kind RequestKind
	// Took is how long it ran.
	Took time.Duration
	// Err is why it failed; nil when it did not.
	Err error
}

// Store holds one Repo per normalized repository URL and set of
// credentials: callers with different credentials (Applications of
// projects with credentials of their own) never share a clone, its
// fetched commits or its resolved refs, so nothing fetched with one
// project's credentials is served to another.
type Store struct {
	opts  Options
	mu    sync.Mutex
	repos map[string]*Repo
	// lsRemoteTurns holds a token per running ls-remote (nil: unbounded).
	lsRemoteTurns chan struct{}
}

// NewStore returns a Store rooted at opts.Root.
func NewStore(opts Options) *Store {
	if opts.RefsTTL == 0 {
		opts.RefsTTL = 3 * time.Second
	}
	if opts.GitBinary == "" {
		opts.GitBinary = "git"
	}
	if opts.MaxCheckoutBytes == 0 {
		opts.MaxCheckoutBytes = 2 << 30
	}
	s := &Store{opts: opts, repos: map[string]*Repo{}}
	if opts.LsRemoteParallelism > 0 {
		s.lsRemoteTurns = make(chan struct{}, opts.LsRemoteParallelism)
	}
	return s
}

// Repo returns the repository at url as reached with creds, creating its
// handle on first use.
func (s *Store) Repo(url string, creds Creds) *Repo {
	key := NormalizeURL(url)
	if id := creds.identity(); id != "" {
		key += "\x00" + id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[key]
	if !ok {
		sum := sha256.Sum256([]byte(key))
		r = &Repo{
			url:   url,
			dir:   filepath.Join(s.opts.Root, hex.EncodeToString(sum[:12])),
			opts:  s.opts,
			creds: creds,
			turns: s.lsRemoteTurns,
		}
		s.repos[key] = r
	}
	return r
}

// NormalizeURL makes equivalent repository URLs compare equal, as Argo CD
// does: lower case, no trailing slash or ".git", and no credentials (an SSH
// URL keeps its user, which names the account rather than a secret).
func NormalizeURL(raw string) string {
	s := strings.ToLower(strings.TrimSpace(raw))
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		if u.Scheme != "ssh" {
			u.User = nil
		}
		s = u.String()
	}
	s = strings.TrimSuffix(s, "/")
	return strings.TrimSuffix(s, ".git")
}
