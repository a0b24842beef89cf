package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

func setTag(tag string) func(dir string) error {
	return func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "app", "tag.txt"), []byte(tag+"\n"), 0o644)
	}
}

func TestWriterCommitsPushesAndSkipsEmptyCommits(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "deploy")
	remote.Commit(t, "init", map[string]string{"app/tag.txt": "1.0.0\n", "README": "x\n"})
	creds := Creds{Username: srv.Username, Password: srv.Password}
	w := NewWriter(t.TempDir(), 3)
	ctx := context.Background()

	change := Change{AuthorName: "Image Updater", AuthorEmail: "updater@example.com", Message: "tag 1.1.0", Edit: setTag("1.1.0")}
	sha, err := w.Commit(ctx, remote.URL, creds, change)
	if err != nil {
		t.Fatal(err)
	}
	if sha == "" || sha != remote.Head(t, "main") {
		t.Fatalf("pushed %q, main is at %s", sha, remote.Head(t, "main"))
	}
	if got := remote.Log(t, "main", 1)[0]; got != "tag 1.1.0 <Image Updater updater@example.com>" {
		t.Errorf("commit %q", got)
	}
	remote.Pull(t)
	if got := remote.File(t, "app/tag.txt"); got != "1.1.0\n" {
		t.Errorf("tag.txt %q", got)
	}

	// The same edit again changes nothing: no commit.
	sha, err = w.Commit(ctx, remote.URL, creds, change)
	if err != nil || sha != "" {
		t.Fatalf("repeat: sha %q err %v, want no commit", sha, err)
	}
	if n := len(remote.Log(t, "main", 10)); n != 2 {
		t.Errorf("%d commits on main, want 2", n)
	}
}

func TestWriterReappliesAfterAConcurrentPush(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "deploy")
	remote.Commit(t, "init", map[string]string{"app/tag.txt": "1.0.0\n"})
	w := NewWriter(t.TempDir(), 3)
	var once sync.Once
	edits := 0
	change := Change{AuthorName: "u", AuthorEmail: "u@example.com", Message: "tag 2.0.0", Edit: func(dir string) error {
		edits++
		// Someone else pushes between our fetch and our push, once.
		once.Do(func() { remote.Commit(t, "someone else", map[string]string{"other.txt": "hello\n"}) })
		return setTag("2.0.0")(dir)
	}}
	sha, err := w.Commit(context.Background(), remote.URL, Creds{Username: srv.Username, Password: srv.Password}, change)
	if err != nil {
		t.Fatal(err)
	}
	if edits != 2 {
		t.Errorf("edited %d times, want 2 (the rejected push re-applied)", edits)
	}
	log := remote.Log(t, "main", 3)
	if sha != remote.Head(t, "main") || !strings.HasPrefix(log[0], "tag 2.0.0") || !strings.HasPrefix(log[1], "someone else") {
		t.Errorf("main: %q", log)
	}
}

func TestWriterBaseToTargetBranch(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "deploy")
	remote.Commit(t, "init", map[string]string{"app/tag.txt": "1.0.0\n"})
	w := NewWriter(t.TempDir(), 3)
	change := Change{Base: "main", Target: "image-updater-3.0.0", AuthorName: "u", AuthorEmail: "u@example.com", Message: "tag 3.0.0", Edit: setTag("3.0.0")}
	creds := Creds{Username: srv.Username, Password: srv.Password}
	if _, err := w.Commit(context.Background(), remote.URL, creds, change); err != nil {
		t.Fatal(err)
	}
	if remote.Head(t, "image-updater-3.0.0") == remote.Head(t, "main") {
		t.Error("the target branch should hold the commit, main should not")
	}
	if _, err := w.Commit(context.Background(), remote.URL, creds, Change{Base: "nope", Edit: setTag("x")}); !errors.Is(err, ErrRevisionNotFound) {
		t.Errorf("missing base branch: %v", err)
	}
	if _, err := w.Commit(context.Background(), remote.URL, Creds{Username: "git-user", Password: "wrong"}, change); !errors.Is(err, ErrAuthentication) {
		t.Errorf("wrong password: %v", err)
	}
}

// TestWriterOrphanBranch: with Orphan, a missing branch is created holding
// only the edit's files, and later changes build on it; without, a
// missing branch is an error.
func TestWriterOrphanBranch(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "deploy")
	remote.Commit(t, "init", map[string]string{"dry/cm.yaml": "kind: ConfigMap\n"})
	creds := Creds{Username: srv.Username, Password: srv.Password}
	w := NewWriter(t.TempDir(), 3)
	ctx := context.Background()
	write := func(content string) func(dir string) error {
		return func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "dev"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "dev", "manifest.yaml"), []byte(content), 0o644)
		}
	}
	change := Change{Base: "environments/dev", AuthorName: "Argo CD", AuthorEmail: "argo-cd@example.com", Message: "hydrate", Edit: write("one\n")}
	if _, err := w.Commit(ctx, remote.URL, creds, change); !errors.Is(err, ErrRevisionNotFound) {
		t.Fatalf("without Orphan: %v", err)
	}
	change.Orphan = true
	first, err := w.Commit(ctx, remote.URL, creds, change)
	if err != nil || first != remote.Head(t, "environments/dev") {
		t.Fatalf("orphan commit %q, %v; branch at %s", first, err, remote.Head(t, "environments/dev"))
	}
	if n := len(remote.Log(t, "environments/dev", 10)); n != 1 {
		t.Errorf("%d commits on the new branch, want 1 (no history from main)", n)
	}
	change.Edit = write("two\n")
	second, err := w.Commit(ctx, remote.URL, creds, change)
	if err != nil || second == first || len(remote.Log(t, "environments/dev", 10)) != 2 {
		t.Fatalf("second commit %q, %v", second, err)
	}
	if main := remote.Log(t, "main", 10); len(main) != 1 {
		t.Errorf("main changed: %v", main)
	}
}
