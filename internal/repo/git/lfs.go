package git

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// Git LFS replaces a large file in a commit by a small pointer file; the
// content lives on the LFS server. A repository Secret's enableLfs makes a
// checkout hold the content instead of the pointers, as Argo CD's does.
const (
	// lfsPointerMax is the largest file read as a possible pointer (the
	// specification keeps pointers under 1024 bytes).
	lfsPointerMax = 1024
	lfsVersion    = "version https://git-lfs.github.com/spec/v1"
)

var (
	lfsOID  = regexp.MustCompile(`^oid sha256:([0-9a-f]{64})$`)
	lfsSize = regexp.MustCompile(`^size ([0-9]{1,19})$`)
)

// ErrLFSNotInstalled is the error of a checkout with enableLfs where the
// git-lfs program is missing.
var ErrLFSNotInstalled = errors.New("git-lfs is not installed")

// lfsPointer is one pointer file of a checkout.
type lfsPointer struct {
	path string // in the checkout
	oid  string // the content's SHA-256, hex
	size int64
}

// parseLFSPointer reads a pointer file's object ID and size; ok is false
// for any other file.
func parseLFSPointer(data []byte) (oid string, size int64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != lfsVersion {
		return "", 0, false
	}
	size = -1
	for sc.Scan() {
		if m := lfsOID.FindStringSubmatch(sc.Text()); m != nil {
			oid = m[1]
		}
		if m := lfsSize.FindStringSubmatch(sc.Text()); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				size = n
			}
		}
	}
	return oid, size, oid != "" && size >= 0
}

// lfsPointers lists the pointer files under dir, following no symbolic
// link.
func lfsPointers(dir string) ([]lfsPointer, error) {
	var out []lfsPointer
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Size() > lfsPointerMax || info.Size() < int64(len(lfsVersion)) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if oid, size, ok := parseLFSPointer(data); ok {
			out = append(out, lfsPointer{path: path, oid: oid, size: size})
		}
		return nil
	})
	return out, err
}

// smudgeLFS puts the content of every pointer file of commit sha, checked
// out in dir, in place of the pointer: fetched from the LFS server into
// the bare clone first (`git lfs fetch`), each object checked against its
// pointer's hash and size. Their content is bounded by MaxCheckoutBytes
// too.
func (r *Repo) smudgeLFS(ctx context.Context, sha, dir string) error {
	pointers, err := lfsPointers(dir)
	if err != nil || len(pointers) == 0 {
		return err
	}
	var total int64
	for _, p := range pointers {
		total += p.size
	}
	if max := r.opts.MaxCheckoutBytes; max > 0 && total > max {
		return fmt.Errorf("checkout of %s at %s: its Git LFS files hold %d bytes, more than the %d allowed", RedactURL(r.url), sha, total, max)
	}
	if _, err := r.git(ctx, true, "lfs", "version"); err != nil {
		return fmt.Errorf("checkout of %s with enableLfs: %w", RedactURL(r.url), ErrLFSNotInstalled)
	}
	r.fetches.Add(1)
	start := time.Now()
	_, err = r.git(ctx, true, "lfs", "fetch", "--", r.url, sha)
	r.observe(RequestFetch, start, err)
	switch {
	case errors.Is(err, ErrAuthentication):
		return fmt.Errorf("fetching the Git LFS files of %s at %s: %w", RedactURL(r.url), sha, ErrAuthentication)
	case err != nil:
		// Not wrapped: git-lfs failing says nothing about the clone, which
		// a checkout drops when git fails on it.
		return fmt.Errorf("fetching the Git LFS files of %s at %s: %s", RedactURL(r.url), sha, err.Error())
	}
	for _, p := range pointers {
		if err := r.placeLFSObject(p); err != nil {
			return err
		}
	}
	return nil
}

// placeLFSObject writes the fetched content of p over the pointer file,
// checking it against the pointer's hash and size.
func (r *Repo) placeLFSObject(p lfsPointer) error {
	src, err := os.Open(filepath.Join(r.bareDir(), "lfs", "objects", p.oid[:2], p.oid[2:4], p.oid))
	if err != nil {
		return fmt.Errorf("the Git LFS object %s of %s was not fetched: %w", p.oid, RedactURL(r.url), err)
	}
	defer src.Close()
	dst, err := os.OpenFile(p.path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), io.LimitReader(src, p.size+1))
	if closeErr := dst.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	if n != p.size || hex.EncodeToString(h.Sum(nil)) != p.oid {
		return fmt.Errorf("the Git LFS object %s of %s does not match its pointer", p.oid, RedactURL(r.url))
	}
	return nil
}
