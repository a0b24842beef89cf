package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/internal/keylock"
)

// Change is one commit to make and push.
type Change struct {
	// Base is the branch the change starts from; empty is the remote's
	// default branch.
	Base string
	// Target is the branch pushed to; empty is Base. A Target other than
	// Base is (re)created from Base and force-pushed, as Argo CD Image
	// Updater does with base:target branches.
	Target string
	// Orphan starts from an empty tree when Base does not exist on the
	// remote, creating it with the commit (the source hydrator's first
	// commit to a new branch). Default false: a missing Base is
	// ErrRevisionNotFound.
	Orphan bool
	// AuthorName and AuthorEmail sign the commit.
	AuthorName, AuthorEmail string
	Message                 string
	// SignOff adds a Signed-off-by trailer of the author, as git commit
	// --signoff does. Default false.
	SignOff bool
	// Signing, if set, signs the commit. Default: unsigned.
	Signing *Signing
	// Edit changes files in the work tree rooted at dir. It runs again
	// on a fresh checkout when the push is rejected, so it must derive
	// its edits from the files it finds.
	Edit func(dir string) error
	// KeepCurrentTarget leaves a Target other than Base alone when it
	// already holds the same files as the new commit: Commit then
	// returns ErrTargetCurrent and pushes nothing (a pull request's
	// branch is not rewritten every cycle). Default false: the Target is
	// rebuilt and force-pushed.
	KeepCurrentTarget bool
}

// ErrTargetCurrent is returned, with KeepCurrentTarget, when the target
// branch already holds the change.
var ErrTargetCurrent = errors.New("the target branch already holds the change")

// Writer commits and pushes changes. It keeps one shallow work tree per
// repository, reused from one change to the next, and makes one change
// at a time per repository.
type Writer struct {
	root    string
	binary  string
	retries int

	// Observe, if set, hears of each ls-remote, fetch and push the
	// Writer makes, when it ends (Argo CD's commit server metrics).
	// Default: none. Set it before the first Commit.
	Observe func(Request)

	// locks make one change at a time per repository.
	locks keylock.Locks
}

// NewWriter returns a Writer keeping its work trees under root. A
// rejected push is fetched, edited again and pushed up to retries times.
func NewWriter(root string, retries int) *Writer {
	return &Writer{root: root, binary: "git", retries: retries}
}

// Commit applies c to the repository at url and pushes it. It returns
// the pushed commit's SHA, or "" when the edit changed nothing (and no
// commit was made).
func (w *Writer) Commit(ctx context.Context, url string, creds Creds, c Change) (string, error) {
	if c.Signing != nil {
		if err := c.Signing.Validate(); err != nil {
			return "", err
		}
	}
	key := NormalizeURL(url)
	defer w.locks.Lock(key)()
	sum := sha256.Sum256([]byte(key))
	t := &worktree{cmd: command{binary: w.binary, dir: filepath.Join(w.root, hex.EncodeToString(sum[:12])), creds: creds, url: url}, observe: w.Observe}
	if err := t.init(ctx); err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		sha, err := t.commit(ctx, c)
		if !errors.Is(err, ErrPushRejected) || attempt >= w.retries {
			return sha, err
		}
	}
}

// worktree is a repository's work tree with the command that runs git in it.
type worktree struct {
	cmd     command
	observe func(Request)
}

// remote runs a git command that talks to the remote, kind of request.
func (t *worktree) remote(ctx context.Context, kind RequestKind, args ...string) (string, error) {
	start := time.Now()
	out, err := t.git(ctx, args...)
	if t.observe != nil {
		t.observe(Request{URL: RedactURL(t.cmd.url), Kind: kind, Took: time.Since(start), Err: err})
	}
	return out, err
}

func (t *worktree) git(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	err := runGit(ctx, t.cmd, func(r io.Reader) error {
		_, err := io.Copy(&out, r)
		return err
	}, args...)
	return strings.TrimSpace(out.String()), err
}

func (t *worktree) init(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(t.cmd.dir, ".git")); err == nil {
		return nil
	}
	if err := os.MkdirAll(t.cmd.dir, 0o755); err != nil {
		return err
	}
	_, err := t.git(ctx, "init", "--quiet")
	return err
}

// defaultBranch asks the remote which branch HEAD points at.
func (t *worktree) defaultBranch(ctx context.Context) (string, error) {
	out, err := t.remote(ctx, RequestLsRemote, "ls-remote", "--symref", "--", t.cmd.url, "HEAD")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			return strings.Fields(ref)[0], nil
		}
	}
	return "", fmt.Errorf("repository %s has no default branch; name one", RedactURL(t.cmd.url))
}

// checkoutBase makes the work tree the tip of base (one commit deep), or
// an empty tree on a new unborn branch when base does not exist and
// orphan allows it.
func (t *worktree) checkoutBase(ctx context.Context, base string, orphan bool) error {
	_, err := t.remote(ctx, RequestFetch, "fetch", "--quiet", "--depth", "1", "--no-tags", "--", t.cmd.url, "+refs/heads/"+base+":refs/capstan/base")
	missing := err != nil && strings.Contains(err.Error(), "couldn't find remote ref")
	switch {
	case missing && orphan:
		_, _ = t.git(ctx, "update-ref", "-d", "refs/heads/capstan-orphan")
		for _, args := range [][]string{{"symbolic-ref", "HEAD", "refs/heads/capstan-orphan"}, {"read-tree", "--empty"}} {
			if _, err := t.git(ctx, args...); err != nil {
				return err
			}
		}
	case missing:
		return fmt.Errorf("%w: branch %q in repository %s", ErrRevisionNotFound, base, RedactURL(t.cmd.url))
	case err != nil:
		return err
	default:
		if _, err := t.git(ctx, "checkout", "--quiet", "--force", "-B", "capstan-write", "refs/capstan/base"); err != nil {
			return err
		}
	}
	_, err = t.git(ctx, "clean", "--quiet", "-fdx")
	return err
}

// commit makes one attempt: fetch the base's tip (one commit deep),
// edit, commit, push.
func (t *worktree) commit(ctx context.Context, c Change) (string, error) {
	base := c.Base
	if base == "" {
		var err error
		if base, err = t.defaultBranch(ctx); err != nil {
			return "", err
		}
	}
	target := c.Target
	if target == "" {
		target = base
	}
	for _, branch := range []string{base, target} {
		if err := ValidateRefName(branch); err != nil {
			return "", fmt.Errorf("branch of repository %s: %w", RedactURL(t.cmd.url), err)
		}
	}
	if err := t.checkoutBase(ctx, base, c.Orphan); err != nil {
		return "", err
	}
	if err := c.Edit(t.cmd.dir); err != nil {
		return "", err
	}
	if _, err := t.git(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if status, err := t.git(ctx, "status", "--porcelain"); err != nil || status == "" {
		return "", err
	}
	author := t.cmd
	author.env = []string{
		"GIT_AUTHOR_NAME=" + c.AuthorName, "GIT_AUTHOR_EMAIL=" + c.AuthorEmail,
		"GIT_COMMITTER_NAME=" + c.AuthorName, "GIT_COMMITTER_EMAIL=" + c.AuthorEmail,
	}
	if s := c.Signing; s != nil && s.GNUPGHome != "" {
		author.env = append(author.env, "GNUPGHOME="+s.GNUPGHome)
	}
	args, err := c.commitArgs()
	if err != nil {
		return "", err
	}
	discard := func(r io.Reader) error { _, err := io.Copy(io.Discard, r); return err }
	if err := runGit(ctx, author, discard, args...); err != nil {
		return "", err
	}
	if s := c.Signing; s != nil && s.GNUPGHome != "" {
		// No unsigned or wrongly signed commit is pushed.
		if err := runGit(ctx, author, discard, "verify-commit", "HEAD"); err != nil {
			return "", fmt.Errorf("the signed commit does not verify with key %s: %w", s.Key, err)
		}
	}
	refspec := "HEAD:refs/heads/" + target
	if target != base {
		if c.KeepCurrentTarget && t.targetHolds(ctx, target) {
			return "", ErrTargetCurrent
		}
		refspec = "+" + refspec
	}
	if _, err := t.remote(ctx, RequestPush, "push", "--quiet", "--", t.cmd.url, refspec); err != nil {
		return "", err
	}
	return t.git(ctx, "rev-parse", "HEAD")
}

// targetHolds reports whether the remote's target branch has the same
// files as the commit just made (false when it does not exist or cannot
// be read: the push decides).
func (t *worktree) targetHolds(ctx context.Context, target string) bool {
	if _, err := t.remote(ctx, RequestFetch, "fetch", "--quiet", "--depth", "1", "--no-tags", "--", t.cmd.url, "+refs/heads/"+target+":refs/capstan/target"); err != nil {
		return false
	}
	theirs, err1 := t.git(ctx, "rev-parse", "refs/capstan/target^{tree}")
	ours, err2 := t.git(ctx, "rev-parse", "HEAD^{tree}")
	return err1 == nil && err2 == nil && theirs == ours
}

// SigningMethod is how commits are signed.
type SigningMethod string

// The signing methods, as git's gpg.format names them.
const (
	// SignOpenPGP signs with a key of the process's GnuPG keyring.
	SignOpenPGP SigningMethod = "openpgp"
	// SignSSH signs with an SSH private key file.
	SignSSH SigningMethod = "ssh"
)

// Signing says how a commit is signed.
type Signing struct {
	Method SigningMethod
	// Key is the OpenPGP key's ID (8 to 40 hexadecimal digits) in the
	// keyring of GNUPGHOME, or the absolute path of an SSH private key.
	Key string
	// GNUPGHome, if set, is the GnuPG home holding the OpenPGP key (see
	// ImportSigningKey); the commit is then verified with it before it is
	// pushed. Default: the process's GNUPGHOME, unverified.
	GNUPGHome string
}

// Validate checks the method and the key's form.
func (s *Signing) Validate() error {
	switch s.Method {
	case SignOpenPGP:
		if !openPGPKeyID.MatchString(s.Key) {
			return fmt.Errorf("commit signing key %q: want an OpenPGP key ID of 8 to 40 hexadecimal digits", s.Key)
		}
	case SignSSH:
		if !filepath.IsAbs(s.Key) || strings.ContainsAny(s.Key, "\x00\n\r") {
			return fmt.Errorf("commit signing key %q: want the absolute path of an SSH private key", s.Key)
		}
	default:
		return fmt.Errorf("commit signing method %q: want openpgp or ssh", s.Method)
	}
	return nil
}

var openPGPKeyID = regexp.MustCompile(`^(0x)?[0-9A-Fa-f]{8,40}$`)

// commitArgs are git's arguments for the commit: configuration first,
// then the commit with its signature and sign-off.
func (c Change) commitArgs() ([]string, error) {
	var args, flags []string
	if s := c.Signing; s != nil {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		// Each value is one argument of its own: never read as an option.
		args = append(args, "-c", "gpg.format="+string(s.Method), "-c", "user.signingKey="+s.Key)
		flags = append(flags, "--gpg-sign")
	}
	if c.SignOff {
		flags = append(flags, "--signoff")
	}
	args = append(args, "commit", "--quiet", "--no-verify")
	return append(append(args, flags...), "-m", c.Message), nil
}
