package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/gpgkey"
)

// TestImportSigningKey: an armored private key, with or without a
// passphrase read from a file, signs the commits a Writer pushes with it,
// which verify against the key; a wrong passphrase is refused at once.
func TestImportSigningKey(t *testing.T) {
	key := gpgkey.New(t, "hydrator")
	for _, tc := range []struct {
		name, passphrase, given string
		ok                      bool
	}{
		{"no passphrase", "", "", true},
		{"its passphrase", "s3cret", "s3cret", true},
		{"a wrong passphrase", "s3cret", "wrong", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keyFile := filepath.Join(dir, "signingKey")
			if err := os.WriteFile(keyFile, []byte(key.ArmoredPrivate(tc.passphrase)), 0o600); err != nil {
				t.Fatal(err)
			}
			pass := ""
			if tc.given != "" {
				pass = filepath.Join(dir, "passphrase")
				if err := os.WriteFile(pass, []byte(tc.given), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			home := filepath.Join(dir, "gnupg")
			t.Cleanup(func() { _ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run() })
			signing, err := ImportSigningKey(ctx, home, keyFile, pass)
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), "cannot sign") {
					t.Fatalf("a key without its passphrase: %v, want it refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(key.ID(), strings.ToUpper(signing.Key)) {
				t.Errorf("signing with %s, want %s", signing.Key, key.ID())
			}
			remote := gitserver.NewLocalRepo(t)
			remote.Commit(t, "init", map[string]string{"README": "x"})
			w := NewWriter(filepath.Join(dir, "work"), 0)
			_, err = w.Commit(ctx, remote.URL, Creds{}, Change{AuthorName: "Hydrator", AuthorEmail: "hydrator@example.com", Message: "hydrate",
				Signing: signing, Edit: func(d string) error { return os.WriteFile(filepath.Join(d, "out.yaml"), []byte("a: 1\n"), 0o600) }})
			if err != nil {
				t.Fatal(err)
			}
			signed := splitSignature([]byte(remote.CommitObject(t, remote.Head(t, "main"))))
			keyring, err := NewKeyring([]string{key.Armored()})
			if err != nil {
				t.Fatal(err)
			}
			if signed == nil || signed.Signature == "" {
				t.Fatal("the pushed commit is not signed")
			}
			if _, err := keyring.Verify(signed.Payload, signed.Signature); err != nil {
				t.Errorf("the pushed commit's signature does not verify with the key: %v", err)
			}
		})
	}
}
