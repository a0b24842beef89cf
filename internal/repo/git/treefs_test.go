package git

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestTreeIsAFileSystem checks the commit's files read from objects against
// io/fs's own conformance test and against a checkout of the same commit.
func TestTreeIsAFileSystem(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	files := map[string]string{
		"apps/a/cm.yaml":        "kind: ConfigMap\n",
		"apps/a/nested/x.json":  "{}\n",
		"apps/a.b/z.yaml":       "z: 1\n", // sorts before "apps/a/" in Git's own order
		"apps/b/.argocd-source": "x: y\n",
		"README.md":             "hello\n",
	}
	sha := remote.Commit(t, "first", files)
	repo := newStore(t).Repo(remote.URL, Creds{})
	ctx := context.Background()
	tree, err := repo.Tree(ctx, sha, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(tree, "apps/a/cm.yaml", "apps/a/nested/x.json", "apps/a.b/z.yaml", "apps/b/.argocd-source", "README.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo.dir, "checkouts")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading the tree made a checkout: %v", err)
	}
	dir, err := repo.Checkout(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	var fromTree, fromDisk []string
	walk := func(fsys fs.FS, into *[]string) {
		t.Helper()
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			entry := p + " " + d.Type().String()
			if !d.IsDir() {
				data, err := fs.ReadFile(fsys, p)
				if err != nil {
					return err
				}
				entry += " " + string(data)
			}
			*into = append(*into, entry)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(tree, &fromTree)
	walk(os.DirFS(dir), &fromDisk)
	if strings.Join(fromTree, "|") != strings.Join(fromDisk, "|") {
		t.Errorf("the tree differs from the checkout:\n tree %q\n disk %q", fromTree, fromDisk)
	}
}

func TestTreeLimitsAndLinks(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "first", map[string]string{"app/big.yaml": strings.Repeat("x", 100), "app/small.yaml": "a: 1\n"})
	remote.Symlink(t, "app/link.yaml", "small.yaml")
	sha := remote.Symlink(t, "linked", "app")
	repo := newStore(t).Repo(remote.URL, Creds{})
	tree, err := repo.Tree(context.Background(), sha, 50)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(tree, "app/big.yaml"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over the limit: %v, want ErrTooLarge", err)
	}
	if data, err := fs.ReadFile(tree, "app/small.yaml"); err != nil || string(data) != "a: 1\n" {
		t.Errorf("after a refused file: %q, %v", data, err)
	}
	for _, name := range []string{"app/link.yaml", "linked/small.yaml", "linked"} {
		if _, err := fs.Stat(tree, name); !errors.Is(err, ErrNeedsCheckout) {
			t.Errorf("stat %s: %v, want ErrNeedsCheckout", name, err)
		}
	}
	if _, err := fs.Stat(tree, "app/missing.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := fs.Stat(tree, "../x"); err == nil {
		t.Error("a path out of the tree was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled, err := repo.Tree(context.Background(), sha, 50)
	if err != nil {
		t.Fatal(err)
	}
	cancelled.(*treeFS).ctx = ctx
	if _, err := fs.ReadFile(cancelled, "app/small.yaml"); !errors.Is(err, context.Canceled) {
		t.Errorf("read with a cancelled context: %v", err)
	}
}

// TestTreeFetchesTheCommit: a commit the clone lacks is fetched, and the
// running reader sees it.
func TestTreeFetchesTheCommit(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "first", map[string]string{"a.yaml": "a: 1\n"})
	repo := newStore(t).Repo(remote.URL, Creds{})
	if _, err := repo.Tree(context.Background(), first, 1<<20); err != nil {
		t.Fatal(err)
	}
	second := remote.Commit(t, "second", map[string]string{"a.yaml": "a: 2\n"})
	tree, err := repo.Tree(context.Background(), second, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(tree, "a.yaml"); err != nil || string(data) != "a: 2\n" {
		t.Errorf("got %q, %v", data, err)
	}
	if _, err := repo.Tree(context.Background(), strings.Repeat("1", 40), 1<<20); !errors.Is(err, ErrRevisionNotFound) {
		t.Errorf("an unknown commit: %v", err)
	}
}
