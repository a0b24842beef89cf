package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/capstan-cd/capstan/internal/repo/archive"
)

// Repo is one remote repository and its local bare clone.
type Repo struct {
	url  string
	dir  string
	opts Options

	creds Creds // fixed: a Repo is one URL reached with one set of credentials

	// mu serialises fetches and checkouts of this repository.
	mu sync.Mutex

	refsFlight singleflight.Group
	refsMu     sync.Mutex
	refs       Refs
	refsAt     time.Time

	fetches  atomic.Int64
	lsRemote atomic.Int64
	// turns is the store's bound on ls-remotes at once (nil: none).
	turns chan struct{}

	objectsOnce sync.Once
	objects     *objectReader // see Tree
}

// Stats counts network operations, for tests and metrics.
type Stats struct {
	Fetches   int64
	LsRemotes int64
}

// Stats returns how many fetches and ls-remotes this Repo has run.
func (r *Repo) Stats() Stats {
	return Stats{Fetches: r.fetches.Load(), LsRemotes: r.lsRemote.Load()}
}

// URL is the repository URL as given, which may hold credentials; use
// RedactURL before showing it.
func (r *Repo) URL() string { return r.url }

// git runs a git command against the bare clone (or without one when
// bare is false) with the repository's credentials, and returns stdout.
func (r *Repo) git(ctx context.Context, bare bool, args ...string) ([]byte, error) {
	var stdout bytes.Buffer
	err := r.gitStream(ctx, bare, func(out io.Reader) error {
		_, err := io.Copy(&stdout, out)
		return err
	}, args...)
	return stdout.Bytes(), err
}

// gitStream runs a git command and hands its stdout to consume as it is
// produced, so large outputs (archives) are never held in memory whole.
func (r *Repo) gitStream(ctx context.Context, bare bool, consume func(io.Reader) error, args ...string) error {
	return r.gitPipe(ctx, bare, nil, consume, args...)
}

// gitPipe is gitStream with stdin given to git.
func (r *Repo) gitPipe(ctx context.Context, bare bool, stdin io.Reader, consume func(io.Reader) error, args ...string) error {
	if bare {
		args = append([]string{"--git-dir", r.bareDir()}, args...)
	}
	return runGit(ctx, command{binary: r.opts.GitBinary, creds: r.creds, url: r.url, stdin: stdin, noBuiltin: r.opts.NoBuiltinConfig}, consume, args...)
}

// command is how one git command runs: which binary, in which directory,
// with which credentials, on behalf of which repository (named in errors).
type command struct {
	binary string
	dir    string
	creds  Creds
	url    string
	env    []string
	stdin  io.Reader
	// noBuiltin leaves builtinConfig out (Options.NoBuiltinConfig).
	noBuiltin bool
}

// gitEnv is the environment every git command gets besides the process's
// own: never prompting, messages in English, and only the allowed
// transports, whatever a URL, a redirect or a submodule asks for.
var gitEnv = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GIT_ASKPASS=",
	"SSH_ASKPASS=",
	"LC_ALL=C",
	"GIT_ALLOW_PROTOCOL=" + allowProtocol,
}

// runGit runs git with the command's credentials, never prompting, and
// returns an error naming the repository (without secrets) on failure.
func runGit(ctx context.Context, c command, consume func(io.Reader) error, args ...string) error {
	if c.url != "" {
		if err := ValidateURL(c.url); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "capstan-git-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	credEnv, err := c.creds.env(tmp, c.noBuiltin)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.binary, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), gitEnv...)
	cmd.Env = append(cmd.Env, credEnv...)
	cmd.Env = append(cmd.Env, c.env...)
	cmd.Stdin = c.stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	// A cancelled git may leave a helper (git-remote-http, ssh) holding
	// the pipes: the read end is closed when ctx ends, and Wait gives up
	// on them shortly after git is killed, so nothing waits on a remote
	// that never answers.
	cmd.WaitDelay = pipeGrace
	if err := cmd.Start(); err != nil {
		return err
	}
	stopped := context.AfterFunc(ctx, func() { _ = stdout.Close() })
	defer stopped()
	consumeErr := consume(stdout)
	if consumeErr != nil {
		ended := ctx.Err() // the caller's, before ours below
		cancel()           // stop git; its own error is then of no interest
		_ = cmd.Wait()
		if ended != nil {
			return fmt.Errorf("git %s on %s: %w", gitVerb(args), RedactURL(c.url), ended)
		}
		return consumeErr
	}
	if err := cmd.Wait(); err != nil {
		msg := redact(strings.TrimSpace(stderr.String()))
		if ctx.Err() != nil {
			return fmt.Errorf("git %s on %s: %w", gitVerb(args), RedactURL(c.url), ctx.Err())
		}
		if isAuthFailure(msg) {
			return fmt.Errorf("%w for repository %s: %s", ErrAuthentication, RedactURL(c.url), lastLine(msg))
		}
		if isPushRejected(msg) {
			return fmt.Errorf("%w: git %s on %s: %s", ErrPushRejected, gitVerb(args), RedactURL(c.url), msg)
		}
		return fmt.Errorf("git %s on %s: %w: %s", gitVerb(args), RedactURL(c.url), err, msg)
	}
	return nil
}

// pipeGrace is how long a killed git's output pipes are waited for.
const pipeGrace = 2 * time.Second

func gitVerb(args []string) string {
	for i, a := range args {
		if a == "--git-dir" {
			continue
		}
		if i > 0 && args[i-1] == "--git-dir" {
			continue
		}
		return a
	}
	return "command"
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (r *Repo) bareDir() string { return filepath.Join(r.dir, "repo.git") }

// LsRemote returns the remote's refs. Concurrent callers share one
// ls-remote, and its result is reused for Options.RefsTTL unless force is set.
func (r *Repo) LsRemote(ctx context.Context, force bool) (Refs, error) {
	if !force {
		r.refsMu.Lock()
		refs, at := r.refs, r.refsAt
		r.refsMu.Unlock()
		if refs != nil && time.Since(at) < r.opts.RefsTTL {
			return refs, nil
		}
	}
	v, err, _ := r.refsFlight.Do("ls-remote", func() (any, error) {
		if r.turns != nil {
			select {
			case r.turns <- struct{}{}:
				defer func() { <-r.turns }()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		r.lsRemote.Add(1)
		if r.opts.RequestTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, r.opts.RequestTimeout)
			defer cancel()
		}
		start := time.Now()
		out, err := r.git(ctx, false, "ls-remote", "--symref", "--", r.url)
		r.observe(RequestLsRemote, start, err)
		if err != nil {
			return nil, err
		}
		refs := parseLsRemote(out)
		r.refsMu.Lock()
		r.refs, r.refsAt = refs, time.Now()
		r.refsMu.Unlock()
		return refs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(Refs), nil
}

var (
	fullSHA  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	shortSHA = regexp.MustCompile(`^[0-9a-f]{4,39}$`)
)

// Resolve turns a revision (branch, tag, HEAD, empty, a full or short
// commit SHA, or a semantic version constraint on tags) into a full commit
// SHA. Branches, tags, HEAD and constraints cost one shared ls-remote; a
// full SHA costs nothing; a short SHA needs a fetch.
func (r *Repo) Resolve(ctx context.Context, revision string) (string, error) {
	return r.ResolveTagged(ctx, revision, "", false)
}

// ResolveFresh is Resolve without reusing a recent ls-remote (hard refresh).
func (r *Repo) ResolveFresh(ctx context.Context, revision string) (string, error) {
	return r.ResolveTagged(ctx, revision, "", true)
}

// ResolveTagged is Resolve for a source with a tagPrefix: a version or a
// constraint names tags that start with it (see Refs.ResolveConstraint).
// fresh skips a recent ls-remote.
func (r *Repo) ResolveTagged(ctx context.Context, revision, tagPrefix string, fresh bool) (string, error) {
	if fullSHA.MatchString(revision) {
		return revision, nil
	}
	refs, err := r.LsRemote(ctx, fresh)
	if err != nil {
		return "", err
	}
	if tagPrefix != "" {
		if sha, ok := refs.Resolve("refs/tags/" + tagPrefix + revision); ok {
			return sha, nil
		}
	}
	if sha, ok := refs.Resolve(revision); ok {
		return sha, nil
	}
	if _, sha, ok := refs.ResolveConstraint(revision, tagPrefix); ok {
		return sha, nil
	}
	if shortSHA.MatchString(revision) {
		defer r.lock()()
		if err := r.fetchLocked(ctx); err != nil {
			return "", err
		}
		out, err := r.git(ctx, true, "rev-parse", "--verify", "--quiet", revision+"^{commit}")
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	return "", fmt.Errorf("%w: %q in repository %s", ErrRevisionNotFound, revision, RedactURL(r.url))
}

// lock takes the repository's lock, which fetches and checkouts hold,
// telling Options.Waiting while it waits; it returns the unlock.
func (r *Repo) lock() (unlock func()) {
	if r.mu.TryLock() {
		return r.mu.Unlock
	}
	if waiting := r.opts.Waiting; waiting != nil {
		url := RedactURL(r.url)
		waiting(url, 1)
		defer waiting(url, -1)
	}
	r.mu.Lock()
	return r.mu.Unlock
}

// ensureClone creates the bare clone directory when missing.
func (r *Repo) ensureClone(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(r.bareDir(), "HEAD")); err == nil {
		return nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	_, err := r.git(ctx, false, "init", "--quiet", "--bare", r.bareDir())
	return err
}

// fetchLocked fetches every branch and tag. The caller holds r.mu.
func (r *Repo) fetchLocked(ctx context.Context) error {
	if err := r.ensureClone(ctx); err != nil {
		return err
	}
	r.fetches.Add(1)
	start := time.Now()
	_, err := r.git(ctx, true, slices.Concat([]string{"fetch", "--quiet", "--force", "--prune", "--no-recurse-submodules"}, r.depth(),
		[]string{"--", r.url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"})...)
	r.observe(RequestFetch, start, err)
	return err
}

// depth is the fetch option of a shallow repository (Creds.Depth), none
// for a full one.
func (r *Repo) depth() []string {
	if r.creds.Depth <= 0 {
		return nil
	}
	return []string{"--depth=" + strconv.Itoa(r.creds.Depth)}
}

// observe tells Options.Observe of a request to the remote that began at
// start and ended now with err.
func (r *Repo) observe(kind RequestKind, start time.Time, err error) {
	if r.opts.Observe != nil {
		r.opts.Observe(Request{URL: RedactURL(r.url), Kind: kind, Took: time.Since(start), Err: err})
	}
}

func (r *Repo) hasCommit(ctx context.Context, sha string) bool {
	if _, err := os.Stat(r.bareDir()); err != nil {
		return false
	}
	_, err := r.git(ctx, true, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// Checkout returns a directory holding the files of commit sha. It fetches
// only when the commit is not already in the local clone, and extracts each
// commit once; the directory must be treated as read-only.
func (r *Repo) Checkout(ctx context.Context, sha string) (string, error) {
	if !fullSHA.MatchString(sha) {
		return "", fmt.Errorf("checkout of %s needs a full commit SHA, got %q", RedactURL(r.url), sha)
	}
	dst := filepath.Join(r.dir, "checkouts", sha)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := r.ensureCommit(ctx, sha); err != nil {
		return "", err
	}
	defer r.lock()()
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := r.extract(ctx, sha, dst); err != nil {
		var failed *exec.ExitError
		if errors.As(err, &failed) && ctx.Err() == nil {
			// git could not read the commit it holds: the clone is damaged
			// (a fetch cut short by a full disk, say). Drop it; the next
			// checkout fetches afresh.
			_ = os.RemoveAll(r.bareDir())
			r.objectReader().reset()
			return "", fmt.Errorf("extracting %s of %s (the local clone is damaged and was removed; it is fetched again next time): %w", sha, RedactURL(r.url), err)
		}
		return "", fmt.Errorf("extracting %s of %s: %w", sha, RedactURL(r.url), err)
	}
	return dst, nil
}

// extract writes the tree of sha into dst through a temporary directory, so
// dst appears complete or not at all.
func (r *Repo) extract(ctx context.Context, sha, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".tmp-")
	if err != nil {
		return err
	}
	err = r.gitStream(ctx, true, func(stream io.Reader) error {
		return archive.Untar(stream, tmp, archive.Options{MaxBytes: r.opts.MaxCheckoutBytes, Symlinks: true})
	}, "archive", "--format=tar", sha)
	if err == nil && r.creds.LFS {
		err = r.smudgeLFS(ctx, sha, tmp)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.RemoveAll(tmp)
		if _, statErr := os.Stat(dst); statErr == nil {
			return nil
		}
		return err
	}
	return nil
}
