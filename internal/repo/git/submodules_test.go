package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// TestCheckoutRecursive: a commit's submodules, and theirs, are checked
// out at the commits it pins, from URLs relative to the repository's or
// absolute; a submodule the repository's .gitmodules points at the repo
// server's own disk is refused.
func TestCheckoutRecursive(t *testing.T) {
	srv := gitserver.New(t)
	inner := srv.NewRepo(t, "inner")
	innerSHA := inner.Commit(t, "inner", map[string]string{"inner.yaml": "kind: Inner\n"})
	lib := srv.NewRepo(t, "lib")
	libSHA := lib.CommitRaw(t, "main",
		gitserver.RawEntry{Name: ".gitmodules", Body: "[submodule \"inner\"]\n\tpath = deep\n\turl = " + inner.URL + "\n"},
		gitserver.RawEntry{Name: "deep", Gitlink: innerSHA},
		gitserver.RawEntry{Name: "lib.yaml", Body: "kind: Lib\n"})
	app := srv.NewRepo(t, "app")
	appSHA := app.CommitRaw(t, "main",
		gitserver.RawEntry{Name: ".gitmodules", Body: "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n"},
		gitserver.RawEntry{Name: "own.yaml", Body: "kind: Own\n"},
		gitserver.RawEntry{Name: "vendor", Entries: []gitserver.RawEntry{{Name: "lib", Gitlink: libSHA}}})
	store := NewStore(Options{Root: t.TempDir(), MaxCheckoutBytes: 1 << 20})
	creds := Creds{Username: srv.Username, Password: srv.Password}
	ctx := context.Background()
	dir, err := store.CheckoutRecursive(ctx, store.Repo(app.URL, creds), appSHA)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"own.yaml": "kind: Own\n", "vendor/lib/lib.yaml": "kind: Lib\n", "vendor/lib/deep/inner.yaml": "kind: Inner\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, file)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", file, got, err)
		}
	}
	if again, err := store.CheckoutRecursive(ctx, store.Repo(app.URL, creds), appSHA); err != nil || again != dir {
		t.Errorf("a second checkout: %s, %v; want the same directory", again, err)
	}

	local := srv.NewRepo(t, "sneaky")
	sneakySHA := local.CommitRaw(t, "main",
		gitserver.RawEntry{Name: ".gitmodules", Body: "[submodule \"x\"]\n\tpath = x\n\turl = file:///var/lib/other-tenant.git\n"},
		gitserver.RawEntry{Name: "x", Gitlink: innerSHA})
	if _, err := store.CheckoutRecursive(ctx, store.Repo(local.URL, creds), sneakySHA); err == nil || !strings.Contains(err.Error(), "fetched over https, http, ssh, git only") {
		t.Errorf("a submodule on the repo server's disk: %v", err)
	}
}
