package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// maxSignedCommit bounds a commit object read for its signature; a larger
// one (a message of megabytes) is refused rather than held.
const maxSignedCommit = 1 << 20

// Signed is a commit as its signature covers it.
type Signed struct {
	// Payload is the commit object without its signature header: what
	// was signed.
	Payload []byte `json:"payload"`
	// Signature is the ASCII-armored OpenPGP signature; empty when the
	// commit is not signed.
	Signature string `json:"signature,omitempty"`
}

// Signature reads commit sha (a full SHA) and its OpenPGP signature,
// fetching it when the local clone lacks it.
func (r *Repo) Signature(ctx context.Context, sha string) (*Signed, error) {
	if !fullSHA.MatchString(sha) {
		return nil, fmt.Errorf("revision %s must be resolved", sha)
	}
	if err := r.ensureCommit(ctx, sha); err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	read := func(rd io.Reader) error {
		n, err := io.Copy(&raw, io.LimitReader(rd, maxSignedCommit+1))
		_, _ = io.Copy(io.Discard, rd)
		if err == nil && n > maxSignedCommit {
			err = fmt.Errorf("commit %s is over %d bytes", sha, maxSignedCommit)
		}
		return err
	}
	if err := r.gitStream(ctx, true, read, "cat-file", "commit", sha); err != nil {
		return nil, err
	}
	return splitSignature(raw.Bytes()), nil
}

// splitSignature takes the gpgsig header (its first line and the lines
// after it that start with a space) out of a commit object.
func splitSignature(commit []byte) *Signed {
	headers, message, _ := bytes.Cut(commit, []byte("\n\n"))
	var payload, sig bytes.Buffer
	inSig := false
	for _, line := range bytes.Split(headers, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("gpgsig ")):
			inSig = true
			sig.Write(line[len("gpgsig "):])
			sig.WriteByte('\n')
		case inSig && bytes.HasPrefix(line, []byte(" ")):
			sig.Write(line[1:])
			sig.WriteByte('\n')
		default:
			inSig = false
			payload.Write(line)
			payload.WriteByte('\n')
		}
	}
	payload.WriteByte('\n')
	payload.Write(message)
	return &Signed{Payload: payload.Bytes(), Signature: sig.String()}
}
