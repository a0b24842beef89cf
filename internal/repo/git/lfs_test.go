package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/giteaserver"
)

// TestLFSCheckout: with Creds.LFS (a repository Secret's enableLfs), a
// checkout of a commit whose large files Git LFS keeps on a real Gitea
// holds their content; without it, their pointers, as git stores them.
func TestLFSCheckout(t *testing.T) {
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Skip("git-lfs is not installed (hack/install-deps.sh installs it)")
	}
	gitea := giteaserver.Start(t)
	gitea.Org(t, "team")
	gitea.Repo(t, "team", "big", nil)
	blob := strings.Repeat("large binary content\n", 4096)
	work := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+work, "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("clone", "--quiet", gitea.CloneURL("team", "big"), ".")
	run("lfs", "install", "--local")
	run("lfs", "track", "*.bin")
	for path, content := range map[string]string{"data/blob.bin": blob, "app/cm.yaml": "kind: ConfigMap\n"} {
		if err := os.MkdirAll(filepath.Join(work, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", ".")
	run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "large files")
	run("push", "--quiet", "origin", "main")

	ctx := context.Background()
	store := NewStore(Options{Root: t.TempDir(), RefsTTL: time.Minute})
	url := gitea.URL + "/team/big.git"
	creds := Creds{Username: giteaserver.Username, Password: giteaserver.Password}
	read := func(c Creds) string {
		t.Helper()
		repo := store.Repo(url, c)
		sha, err := repo.Resolve(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		dir, err := repo.Checkout(ctx, sha)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "data", "blob.bin"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read(creds); !strings.HasPrefix(got, lfsVersion) {
		t.Errorf("without enableLfs the file is %.60q, want its pointer", got)
	}
	lfs := creds
	lfs.LFS = true
	if got := read(lfs); got != blob {
		t.Errorf("with enableLfs the file is %.60q (%d bytes), want its %d bytes of content", got, len(got), len(blob))
	}

	small := NewStore(Options{Root: t.TempDir(), RefsTTL: time.Minute, MaxCheckoutBytes: 1000})
	repo := small.Repo(url, lfs)
	sha, err := repo.Resolve(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Checkout(ctx, sha); err == nil || !strings.Contains(err.Error(), "Git LFS files hold") {
		t.Errorf("LFS content over the checkout bound: %v", err)
	}
}

// TestLFSPointers: only files in the pointer format are taken for
// pointers.
func TestLFSPointers(t *testing.T) {
	oid := strings.Repeat("ab", 32)
	for text, want := range map[string]bool{
		lfsVersion + "\noid sha256:" + oid + "\nsize 12\n":   true,
		lfsVersion + "\noid sha256:" + oid + "\n":            false, // no size
		lfsVersion + "\noid sha1:" + oid[:40] + "\nsize 1\n": false,
		"version 2\noid sha256:" + oid + "\nsize 12\n":       false,
		"kind: ConfigMap\n":                                  false,
	} {
		if _, _, ok := parseLFSPointer([]byte(text)); ok != want {
			t.Errorf("%q: pointer %t, want %t", text, ok, want)
		}
	}
}
