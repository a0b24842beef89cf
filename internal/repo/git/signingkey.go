package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ImportSigningKey imports the ASCII-armored OpenPGP private key in the
// file keyPath into a GnuPG home of its own at home (created, private to
// the process's user), and returns the Signing that signs with it, as
// Argo CD's commit server signs hydrated commits
// (commitserver.signing.key.path). passphraseFile, if set, holds the key's
// passphrase, which gpg then reads itself: it is never on a command line.
// The key signs once before it is returned: a key that cannot sign (a
// wrong passphrase, say) is an error at once, not at the first commit.
func ImportSigningKey(ctx context.Context, home, keyPath, passphraseFile string) (*Signing, error) {
	for _, p := range []string{keyPath, passphraseFile, home} {
		if strings.ContainsAny(p, "\x00\n\r") {
			return nil, fmt.Errorf("signing key path %q: a path may not hold line breaks", p)
		}
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	conf := "pinentry-mode loopback\n"
	if passphraseFile != "" {
		abs, err := filepath.Abs(passphraseFile)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("the signing key's passphrase: %w", err)
		}
		conf += "passphrase-file " + abs + "\n"
	}
	if err := os.WriteFile(filepath.Join(home, "gpg.conf"), []byte(conf), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, "gpg-agent.conf"), []byte("allow-loopback-pinentry\n"), 0o600); err != nil {
		return nil, err
	}
	if _, err := gpg(ctx, home, "--import", "--", keyPath); err != nil {
		return nil, fmt.Errorf("importing the signing key %s: %w", keyPath, err)
	}
	out, err := gpg(ctx, home, "--list-secret-keys", "--with-colons")
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(out, "\n") {
		if fields := strings.Split(line, ":"); len(fields) > 4 && fields[0] == "sec" {
			s := &Signing{Method: SignOpenPGP, Key: fields[4], GNUPGHome: home}
			if err := s.Validate(); err != nil {
				return nil, err
			}
			if _, err := gpgIn(ctx, home, strings.NewReader("capstan"), "--local-user", s.Key, "--detach-sign", "--armor"); err != nil {
				return nil, fmt.Errorf("the signing key %s cannot sign: %w", s.Key, err)
			}
			return s, nil
		}
	}
	return nil, fmt.Errorf("the signing key file %s holds no private key", keyPath)
}

// gpg runs gpg in batch mode with the GnuPG home given.
func gpg(ctx context.Context, home string, args ...string) (string, error) {
	return gpgIn(ctx, home, nil, args...)
}

// gpgIn runs gpg as gpg does, reading stdin.
func gpgIn(ctx context.Context, home string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "gpg", append([]string{"--batch", "--no-tty", "--homedir", home}, args...)...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("gpg: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
