package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestWriterSignsAndSignsOff: commits signed with an SSH key or an
// OpenPGP key verify with git against that key, and a sign-off names the
// author.
func TestWriterSignsAndSignsOff(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "deploy")
	remote.Commit(t, "init", map[string]string{"app/tag.txt": "1.0.0\n"})
	creds := Creds{Username: srv.Username, Password: srv.Password}
	w := NewWriter(t.TempDir(), 3)
	ctx := context.Background()
	change := func(tag string, signing *Signing) Change {
		return Change{AuthorName: "Image Updater", AuthorEmail: "updater@example.com", Message: "tag " + tag, Edit: setTag(tag), SignOff: true, Signing: signing}
	}
	keys := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
	}

	t.Run("ssh", func(t *testing.T) {
		key := filepath.Join(keys, "id_ed25519")
		run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "updater", "-f", key)
		sha, err := w.Commit(ctx, remote.URL, creds, change("1.1.0", &Signing{Method: SignSSH, Key: key}))
		if err != nil {
			t.Fatal(err)
		}
		obj := remote.CommitObject(t, sha)
		if !strings.Contains(obj, "-----BEGIN SSH SIGNATURE-----") || !strings.Contains(obj, "Signed-off-by: Image Updater <updater@example.com>") {
			t.Fatalf("the commit is not signed and signed off:\n%s", obj)
		}
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		signers := filepath.Join(keys, "allowed_signers")
		if err := os.WriteFile(signers, []byte("updater@example.com "+string(pub)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := remote.VerifyCommit(sha, "gpg.ssh.allowedSignersFile="+signers); err != nil {
			t.Errorf("the SSH signature does not verify: %v", err)
		}
	})

	t.Run("openpgp", func(t *testing.T) {
		if _, err := exec.LookPath("gpg"); err != nil {
			t.Skip("no gpg (hack/install-deps.sh installs it)")
		}
		home, err := os.MkdirTemp("", "gpg")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run()
			_ = os.RemoveAll(home)
		})
		t.Setenv("GNUPGHOME", home)
		run("gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Image Updater <updater@example.com>", "ed25519", "sign", "never")
		out, err := exec.Command("gpg", "--batch", "--with-colons", "--list-secret-keys").Output()
		if err != nil {
			t.Fatal(err)
		}
		var id string
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Split(line, ":"); f[0] == "sec" && len(f) > 4 {
				id = f[4]
			}
		}
		sha, err := w.Commit(ctx, remote.URL, creds, change("1.2.0", &Signing{Method: SignOpenPGP, Key: id}))
		if err != nil {
			t.Fatal(err)
		}
		if obj := remote.CommitObject(t, sha); !strings.Contains(obj, "-----BEGIN PGP SIGNATURE-----") {
			t.Fatalf("the commit is not signed:\n%s", obj)
		}
		if err := remote.VerifyCommit(sha); err != nil {
			t.Errorf("the OpenPGP signature does not verify: %v", err)
		}
	})

	for _, bad := range []*Signing{{Method: SignOpenPGP, Key: "--exec=x"}, {Method: SignSSH, Key: "relative/key"}, {Method: "x509", Key: "ABCDEF12"}} {
		if _, err := w.Commit(ctx, remote.URL, creds, change("9.9.9", bad)); err == nil || !strings.Contains(err.Error(), "commit signing") {
			t.Errorf("%+v: %v, want a refusal", bad, err)
		}
	}
}
