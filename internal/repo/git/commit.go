package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// maxCommitInfo bounds what is read of a commit's metadata: a message
// longer than that is cut.
const maxCommitInfo = 1 << 20

// Commit is a commit's metadata, as Argo CD shows a revision.
type Commit struct {
	// Author is "Name <email>".
	Author string
	Date   time.Time
	// Message is the whole commit message.
	Message string
	// Tags point at the commit.
	Tags []string
}

// Branches returns the short names of the remote's branches, sorted.
func (r Refs) Branches() []string { return r.shortNames("refs/heads/") }

// Tags returns the short names of the remote's tags, sorted.
func (r Refs) Tags() []string { return r.shortNames("refs/tags/") }

func (r Refs) shortNames(prefix string) []string {
	out := []string{}
	for name := range r {
		if short, ok := strings.CutPrefix(name, prefix); ok {
			out = append(out, short)
		}
	}
	slices.Sort(out)
	return out
}

// CommitInfo reads the metadata of commit sha (a full SHA), fetching it
// when the local clone lacks it.
func (r *Repo) CommitInfo(ctx context.Context, sha string) (*Commit, error) {
	if !fullSHA.MatchString(sha) {
		return nil, fmt.Errorf("revision %s must be resolved", sha)
	}
	if err := r.ensureCommit(ctx, sha); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	read := func(rd io.Reader) error {
		_, err := io.Copy(&out, io.LimitReader(rd, maxCommitInfo))
		_, _ = io.Copy(io.Discard, rd)
		return err
	}
	if err := r.gitStream(ctx, true, read, "show", "--no-patch", "--format=%an <%ae>%x00%aI%x00%B", sha); err != nil {
		return nil, err
	}
	parts := strings.SplitN(out.String(), "\x00", 3)
	if len(parts) != 3 {
		return nil, fmt.Errorf("reading commit %s of %s: unexpected output", sha, RedactURL(r.url))
	}
	c := &Commit{Author: parts[0], Message: strings.TrimRight(parts[2], "\n")}
	c.Date, _ = time.Parse(time.RFC3339, parts[1])
	tags, err := r.git(ctx, true, "tag", "--points-at", sha)
	if err != nil {
		return nil, err
	}
	c.Tags = strings.Fields(string(tags))
	return c, nil
}

// ensureCommit makes sure the local clone holds commit sha: fetched with
// every branch and tag, or on its own when no ref reaches it.
func (r *Repo) ensureCommit(ctx context.Context, sha string) error {
	if r.hasCommit(ctx, sha) {
		return nil
	}
	defer r.lock()()
	if r.hasCommit(ctx, sha) {
		return nil
	}
	if err := r.fetchLocked(ctx); err != nil {
		return err
	}
	if r.hasCommit(ctx, sha) {
		return nil
	}
	r.fetches.Add(1)
	start := time.Now()
	_, err := r.git(ctx, true, slices.Concat([]string{"fetch", "--quiet"}, r.depth(), []string{"--", r.url, sha})...)
	r.observe(RequestFetch, start, err)
	if err != nil || !r.hasCommit(ctx, sha) {
		return fmt.Errorf("%w: commit %s in repository %s", ErrRevisionNotFound, sha, RedactURL(r.url))
	}
	return nil
}
