package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SealTrailer marks a seal commit: signed by a trusted key, it vouches for
// its whole history, which strict verification then does not walk.
const SealTrailer = "Argocd-gpg-seal:"

// Signature check results, as Argo CD words them.
const (
	ResultSigned     = "signed"
	ResultUnsigned   = "unsigned"
	ResultUnknownKey = "signed with key not in keyring"
	ResultBad        = "bad signature"
)

// CommitCheck is one commit as its signature checks out.
type CommitCheck struct {
	Revision string `json:"revision"`
	// Author is the commit's author, "Name <email>".
	Author string `json:"author"`
	// Result is one of the Result constants.
	Result string `json:"result"`
	// KeyID is the signing key's long ID; empty when unsigned.
	KeyID string `json:"keyID,omitempty"`
}

// ErrHistoryTooLong means a history to verify has more commits than
// allowed before its seal commits.
var ErrHistoryTooLong = errors.New("history too long to verify")

// VerifyHistory checks the signatures of commit sha and of all its
// ancestors against ring, newest first, as Argo CD's strict GnuPG mode
// does: the walk stops at seal commits (a SealTrailer in the message and
// a good signature by a key of the ring), which are checked themselves. A
// history of more than max commits to check is ErrHistoryTooLong.
func (r *Repo) VerifyHistory(ctx context.Context, sha string, ring *Keyring, max int) ([]CommitCheck, error) {
	if !fullSHA.MatchString(sha) {
		return nil, fmt.Errorf("revision %s must be resolved", sha)
	}
	if err := r.ensureCommit(ctx, sha); err != nil {
		return nil, err
	}
	candidates, err := r.revList(ctx, nil, max, "rev-list", "--regexp-ignore-case", "--grep="+SealTrailer, sha)
	if err != nil {
		return nil, err
	}
	checks, err := r.checkCommits(ctx, candidates, ring)
	if err != nil {
		return nil, err
	}
	var seals []string
	for _, c := range checks {
		if c.Result == ResultSigned {
			seals = append(seals, c.Revision)
		}
	}
	if len(seals) > 0 && seals[0] == sha {
		return checks[:1], nil // a seal itself: nothing before it is walked
	}
	var in strings.Builder
	in.WriteString(sha + "\n")
	for _, s := range seals {
		in.WriteString("^" + s + "\n")
	}
	revs, err := r.revList(ctx, strings.NewReader(in.String()), max, "rev-list", "--boundary", "--stdin")
	if err != nil {
		return nil, err
	}
	return r.checkCommits(ctx, revs, ring)
}

// revList runs a rev-list and returns the commits it prints (boundary
// commits too), at most max.
func (r *Repo) revList(ctx context.Context, stdin io.Reader, max int, args ...string) ([]string, error) {
	var out []string
	err := r.gitPipe(ctx, true, stdin, func(rd io.Reader) error {
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			rev := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "-")
			if !fullSHA.MatchString(rev) {
				continue
			}
			if len(out) == max {
				return fmt.Errorf("%w: more than %d commits of %s (seal the history with a commit carrying %s)", ErrHistoryTooLong, max, RedactURL(r.url), SealTrailer)
			}
			out = append(out, rev)
		}
		return sc.Err()
	}, args...)
	return out, err
}

// checkCommits reads the commits (one git process) and checks each one's
// signature.
func (r *Repo) checkCommits(ctx context.Context, revs []string, ring *Keyring) ([]CommitCheck, error) {
	if len(revs) == 0 {
		return nil, nil
	}
	checks := make([]CommitCheck, 0, len(revs))
	err := r.gitPipe(ctx, true, strings.NewReader(strings.Join(revs, "\n")+"\n"), func(rd io.Reader) error {
		br := bufio.NewReader(rd)
		for range revs {
			obj, err := readBatchObject(br)
			if err != nil {
				return err
			}
			checks = append(checks, checkCommit(obj, ring))
		}
		return nil
	}, "cat-file", "--batch")
	return checks, err
}

// readBatchObject reads one commit of `git cat-file --batch`'s output.
func readBatchObject(br *bufio.Reader) (*batchObject, error) {
	header, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("reading commits: %w", err)
	}
	fields := strings.Fields(header)
	if len(fields) != 3 || fields[1] != "commit" {
		return nil, fmt.Errorf("reading commits: unexpected %q", strings.TrimSpace(header))
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil || size > maxSignedCommit {
		return nil, fmt.Errorf("commit %s is over %d bytes", fields[0], maxSignedCommit)
	}
	data := make([]byte, size+1) // and the newline after it
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", fields[0], err)
	}
	return &batchObject{sha: fields[0], data: data[:size]}, nil
}

type batchObject struct {
	sha  string
	data []byte
}

// checkCommit checks one commit object's signature.
func checkCommit(obj *batchObject, ring *Keyring) CommitCheck {
	signed := splitSignature(obj.data)
	c := CommitCheck{Revision: obj.sha, Author: Author(signed.Payload), Result: ResultUnsigned}
	if signed.Signature == "" {
		return c
	}
	keyID, err := ring.Verify(signed.Payload, signed.Signature)
	c.KeyID = keyID
	switch {
	case errors.Is(err, ErrUnknownSigner):
		c.Result = ResultUnknownKey
	case err != nil:
		c.Result = ResultBad
	default:
		c.Result = ResultSigned
	}
	return c
}

// Author is a commit object's author as "Name <email>".
func Author(payload []byte) string {
	for _, line := range bytes.Split(payload, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("author ")); ok {
			if i := bytes.LastIndexByte(rest, '>'); i >= 0 {
				return string(rest[:i+1])
			}
			return string(rest)
		}
		if len(line) == 0 {
			break // the headers end
		}
	}
	return ""
}
