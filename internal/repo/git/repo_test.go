package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

func newStore(t *testing.T) *Store {
	return NewStore(Options{Root: t.TempDir(), RefsTTL: time.Minute})
}

func TestResolveAndCheckoutOverSmartHTTP(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "app")
	first := remote.Commit(t, "first", map[string]string{"app/deploy.yaml": "kind: ConfigMap\n"})
	remote.Tag(t, "v1.0.0")
	second := remote.Commit(t, "second", map[string]string{"app/deploy.yaml": "kind: Secret\n"})
	remote.Branch(t, "feature")
	third := remote.Commit(t, "third", map[string]string{"app/extra.yaml": "kind: Service\n"})

	ctx := context.Background()
	repo := newStore(t).Repo(remote.URL, Creds{Username: srv.Username, Password: srv.Password})
	for rev, want := range map[string]string{
		"":                   second,
		"HEAD":               second,
		"main":               second,
		"feature":            third,
		"refs/heads/feature": third,
		"v1.0.0":             first, // annotated tag, peeled to its commit
		first:                first,
	} {
		got, err := repo.Resolve(ctx, rev)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", rev, err)
		}
		if got != want {
			t.Errorf("Resolve(%q) = %s, want %s", rev, got, want)
		}
	}
	if st := repo.Stats(); st.LsRemotes != 1 || st.Fetches != 0 {
		t.Errorf("resolving named revisions cost %+v, want one ls-remote and no fetch", st)
	}

	short, err := repo.Resolve(ctx, first[:8])
	if err != nil || short != first {
		t.Fatalf("Resolve(short sha) = %s, %v; want %s", short, err, first)
	}

	dirFirst, err := repo.Checkout(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	dirThird, err := repo.Checkout(ctx, third)
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dirFirst, "app/deploy.yaml"), "kind: ConfigMap\n")
	assertFile(t, filepath.Join(dirThird, "app/deploy.yaml"), "kind: Secret\n")
	assertFile(t, filepath.Join(dirThird, "app/extra.yaml"), "kind: Service\n")
	if _, err := os.Stat(filepath.Join(dirFirst, "app/extra.yaml")); !os.IsNotExist(err) {
		t.Error("checkout of the first commit holds a file of a later one")
	}

	if _, err := repo.Resolve(ctx, "no-such-branch"); !errors.Is(err, ErrRevisionNotFound) {
		t.Errorf("unknown branch: got %v, want ErrRevisionNotFound", err)
	}
}

func TestWrongPasswordIsAClearAuthenticationError(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "private")
	remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	store := newStore(t)

	for name, creds := range map[string]Creds{
		"wrong password": {Username: srv.Username, Password: "not-the-password"},
		"no credentials": {},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := store.Repo(remote.URL, creds).ResolveFresh(context.Background(), "main")
			if !errors.Is(err, ErrAuthentication) {
				t.Fatalf("got %v, want ErrAuthentication", err)
			}
			if !strings.Contains(err.Error(), remote.URL) {
				t.Errorf("error does not name the repository: %v", err)
			}
			if creds.Password != "" && strings.Contains(err.Error(), creds.Password) {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestCredentialsInURLAreRedacted(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "r")
	remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	withCreds := srv.AuthURL(remote)
	repo := newStore(t).Repo(withCreds, Creds{})
	if _, err := repo.Resolve(context.Background(), "main"); err != nil {
		t.Fatalf("credentials in the URL did not work: %v", err)
	}
	_, err := repo.Resolve(context.Background(), "missing")
	if err == nil || strings.Contains(err.Error(), srv.Password) {
		t.Errorf("error leaks the password or is nil: %v", err)
	}
}

func TestFileURL(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "c", map[string]string{"dir/x.yaml": "x: 1\n"})
	repo := newStore(t).Repo(remote.URL, Creds{})
	got, err := repo.Resolve(context.Background(), "HEAD")
	if err != nil || got != sha {
		t.Fatalf("Resolve = %s, %v; want %s", got, err, sha)
	}
	dir, err := repo.Checkout(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "dir/x.yaml"), "x: 1\n")
}

// TestManyApplicationsOneCommitOneFetch resolves and checks out the same
// revision for 1,000 concurrent callers: one ls-remote, one fetch.
func TestManyApplicationsOneCommitOneFetch(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "monorepo")
	want := remote.Commit(t, "c", map[string]string{"apps/a/cm.yaml": "kind: ConfigMap\n"})
	store := newStore(t)
	creds := Creds{Username: srv.Username, Password: srv.Password}

	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for range 1000 {
		wg.Go(func() {
			repo := store.Repo(remote.URL, creds)
			sha, err := repo.Resolve(context.Background(), "main")
			if err == nil && sha != want {
				err = errors.New("resolved " + sha)
			}
			if err == nil {
				_, err = repo.Checkout(context.Background(), sha)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := store.Repo(remote.URL, creds).Stats()
	if st.Fetches != 1 || st.LsRemotes != 1 {
		t.Errorf("1,000 callers cost %+v, want one ls-remote and one fetch", st)
	}
	if got := srv.Fetches(); got != 1 {
		t.Errorf("server saw %d fetches, want 1", got)
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://GitHub.com/Org/Repo.git":     "https://github.com/org/repo",
		"https://github.com/org/repo/":        "https://github.com/org/repo",
		"https://user:pw@github.com/org/repo": "https://github.com/org/repo",
		"ssh://git@github.com/org/repo.git":   "ssh://git@github.com/org/repo",
		"git@github.com:org/repo.git":         "git@github.com:org/repo",
		"file:///tmp/x/local.git":             "file:///tmp/x/local",
	} {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	if got := RedactURL("https://u:secret@host/r.git"); strings.Contains(got, "secret") {
		t.Errorf("RedactURL kept the password: %s", got)
	}
	if got := redact("fatal: unable to access 'https://u:tok123@host/r.git/'"); strings.Contains(got, "tok123") {
		t.Errorf("redact kept the token: %s", got)
	}
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s = %q, want %q", path, got, want)
	}
}

func TestSSH(t *testing.T) {
	srv := gitserver.NewSSH(t)
	remote := srv.NewRepo(t, "app")
	sha := remote.Commit(t, "c", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	ctx := context.Background()

	repo := newStore(t).Repo(remote.URL, Creds{SSHPrivateKey: srv.ClientKey, KnownHosts: srv.KnownHosts})
	got, err := repo.Resolve(ctx, "main")
	if err != nil || got != sha {
		t.Fatalf("Resolve over SSH = %s, %v; want %s", got, err, sha)
	}
	dir, err := repo.Checkout(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "app/cm.yaml"), "kind: ConfigMap\n")

	otherKey := gitserver.NewSSH(t).ClientKey
	for name, creds := range map[string]Creds{
		"key the server does not accept": {SSHPrivateKey: otherKey, KnownHosts: srv.KnownHosts},
		"unknown host key":               {SSHPrivateKey: srv.ClientKey},
	} {
		_, err := newStore(t).Repo(remote.URL, creds).Resolve(ctx, "main")
		if !errors.Is(err, ErrAuthentication) {
			t.Errorf("%s: got %v, want ErrAuthentication", name, err)
		}
	}
	if _, err := newStore(t).Repo(remote.URL, Creds{SSHPrivateKey: srv.ClientKey, Insecure: true}).Resolve(ctx, "main"); err != nil {
		t.Errorf("insecure skips host key checking: %v", err)
	}
}

func TestCheckoutSizeLimit(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "big", map[string]string{"a.yaml": strings.Repeat("x", 4096), "b.yaml": strings.Repeat("y", 4096)})
	store := NewStore(Options{Root: t.TempDir(), MaxCheckoutBytes: 6000})
	_, err := store.Repo(remote.URL, Creds{}).Checkout(context.Background(), sha)
	if err == nil || !strings.Contains(err.Error(), "limit of 6000 bytes") {
		t.Errorf("got %v, want the size limit error", err)
	}
	if _, err := NewStore(Options{Root: t.TempDir()}).Repo(remote.URL, Creds{}).Checkout(context.Background(), sha); err != nil {
		t.Errorf("within the default limit: %v", err)
	}
}

func TestHTTPSCertificates(t *testing.T) {
	srv := gitserver.NewTLS(t)
	remote := srv.NewRepo(t, "tls")
	sha := remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	auth := Creds{Username: srv.Username, Password: srv.Password}

	_, err := newStore(t).Repo(remote.URL, auth).Resolve(context.Background(), "main")
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: got %v, want a certificate error", err)
	}
	withCA := auth
	withCA.CAData = srv.CAData()
	if got, err := newStore(t).Repo(remote.URL, withCA).Resolve(context.Background(), "main"); err != nil || got != sha {
		t.Errorf("with the server's CA: %s, %v", got, err)
	}
	insecure := auth
	insecure.Insecure = true
	if got, err := newStore(t).Repo(remote.URL, insecure).Resolve(context.Background(), "main"); err != nil || got != sha {
		t.Errorf("insecure: %s, %v", got, err)
	}
}

// TestDamagedCloneIsFetchedAfresh damages the local clone the way a fetch
// cut short by a full disk does (a commit whose tree is missing): the
// checkout fails saying so and drops the clone, and the next one works.
func TestDamagedCloneIsFetchedAfresh(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	first := remote.Commit(t, "first", map[string]string{"app/a.yaml": "a: 1\n"})
	ctx := context.Background()
	repo := newStore(t).Repo(remote.URL, Creds{})
	if _, err := repo.Checkout(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := remote.Commit(t, "second", map[string]string{"app/b.yaml": "b: 2\n"})
	gitIn := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"--git-dir", repo.bareDir()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("fetch", "--quiet", "--", remote.URL, "+refs/heads/*:refs/heads/*")
	tree := gitIn("rev-parse", second+"^{tree}")
	if err := os.Remove(filepath.Join(repo.bareDir(), "objects", tree[:2], tree[2:])); err != nil {
		t.Fatalf("removing the tree object (is it packed?): %v", err)
	}
	if _, err := repo.Checkout(ctx, second); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("checkout of a damaged clone: %v", err)
	}
	dir, err := repo.Checkout(ctx, second)
	if err != nil {
		t.Fatalf("checkout after the repair: %v", err)
	}
	assertFile(t, filepath.Join(dir, "app/b.yaml"), "b: 2\n")
}

// TestHostileTreeWritesNothingOutside is finding 1 of the tenant review: a
// pushed tree holding a link out of the checkout and a directory of the
// same name (git archive writes the link, then a file beneath its name),
// or a ".git" directory, is refused with a clear error and nothing is
// written outside the checkout.
func TestHostileTreeWritesNothingOutside(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name    string
		entries []gitserver.RawEntry
	}{
		{"a link and a directory of one name", []gitserver.RawEntry{
			{Name: "a", Link: outside}, {Name: "a", Entries: []gitserver.RawEntry{{Name: "x", Body: "pwned"}}}}},
		{"a file named twice", []gitserver.RawEntry{{Name: "a", Link: outside + "/x"}, {Name: "a", Body: "pwned"}}},
		{"a .git directory", []gitserver.RawEntry{{Name: ".git", Entries: []gitserver.RawEntry{{Name: "config", Body: "[core]\n\tfsmonitor = touch " + outside + "/x\n"}}}}},
	} {
		remote := gitserver.NewLocalRepo(t)
		remote.Commit(t, "first", map[string]string{"ok.yaml": "x: 1\n"})
		sha := remote.CommitRaw(t, "main", tc.entries...)
		repo := newStore(t).Repo(remote.URL, Creds{})
		if _, err := repo.Resolve(context.Background(), "main"); err != nil {
			t.Fatal(err)
		}
		_, err := repo.Checkout(context.Background(), sha)
		if err == nil {
			t.Errorf("%s: checked out", tc.name)
		} else if strings.Contains(err.Error(), outside) {
			t.Errorf("%s: the error shows the link's target: %v", tc.name, err)
		}
		if left, _ := os.ReadDir(outside); len(left) != 0 {
			t.Errorf("%s: wrote %s outside the checkout", tc.name, left[0].Name())
		}
	}
}

// TestObjectsAreCheckedWhenFetched: the untar's checks stand behind git's
// own, which refuse such a tree as it is fetched.
func TestObjectsAreCheckedWhenFetched(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "first", map[string]string{"ok.yaml": "x: 1\n"})
	sha := remote.CommitRaw(t, "main", gitserver.RawEntry{Name: "a", Body: "1"}, gitserver.RawEntry{Name: "a", Body: "2"})
	_, err := newStore(t).Repo(remote.URL, Creds{}).Checkout(context.Background(), sha)
	if err == nil || !strings.Contains(err.Error(), "duplicateEntries") {
		t.Errorf("got %v, want git's duplicateEntries refusal", err)
	}
}

// TestObserveRequests: Options.Observe hears of each ls-remote and fetch,
// with the URL its credentials left out and the error of one that failed.
func TestObserveRequests(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "app")
	sha := remote.Commit(t, "c", map[string]string{"x.yaml": "x: 1\n"})
	var mu sync.Mutex
	var seen []Request
	store := NewStore(Options{Root: t.TempDir(), RefsTTL: time.Minute, Observe: func(r Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r)
	}})
	ctx := context.Background()
	repo := store.Repo(remote.URL, Creds{Username: srv.Username, Password: srv.Password})
	if _, err := repo.Resolve(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Checkout(ctx, sha); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Repo(srv.URL+"/missing.git", Creds{Username: srv.Username, Password: srv.Password}).Resolve(ctx, "HEAD"); err == nil {
		t.Fatal("a missing repository resolved")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0].Kind != RequestLsRemote || seen[1].Kind != RequestFetch || seen[2].Kind != RequestLsRemote ||
		seen[0].Err != nil || seen[1].Err != nil || seen[2].Err == nil || seen[0].Took <= 0 {
		t.Fatalf("requests seen: %+v", seen)
	}
	for _, r := range seen {
		if strings.Contains(r.URL, srv.Password) {
			t.Errorf("the URL handed on holds the password: %s", r.URL)
		}
	}
}

// TestShallowFetch: with Creds.Depth (a repository Secret's depth), the
// clone holds only that much history of each fetched commit, an older
// commit named by SHA is still fetched on its own, and the shallow clone is
// kept apart from a full clone of the same URL.
func TestShallowFetch(t *testing.T) {
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "app")
	first := remote.Commit(t, "first", map[string]string{"a.yaml": "kind: ConfigMap\n"})
	remote.Commit(t, "second", map[string]string{"a.yaml": "kind: Secret\n"})
	third := remote.Commit(t, "third", map[string]string{"b.yaml": "kind: Service\n"})
	ctx := context.Background()
	store := newStore(t)
	creds := Creds{Username: srv.Username, Password: srv.Password}
	shallow := creds
	shallow.Depth = 1
	history := func(repo *Repo, sha string) int {
		t.Helper()
		out, err := repo.git(ctx, true, "rev-list", "--count", sha)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		return n
	}
	repo := store.Repo(remote.URL, shallow)
	if _, err := repo.Checkout(ctx, third); err != nil {
		t.Fatal(err)
	}
	if n := history(repo, third); n != 1 {
		t.Errorf("depth 1: %d commits of history, want 1", n)
	}
	dir, err := repo.Checkout(ctx, first)
	if err != nil {
		t.Fatalf("an older commit of a shallow clone: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.yaml")); err != nil || string(data) != "kind: ConfigMap\n" {
		t.Errorf("the older commit's file: %q, %v", data, err)
	}
	full := store.Repo(remote.URL, creds)
	if full.dir == repo.dir {
		t.Fatal("the shallow and the full clone share a directory")
	}
	if _, err := full.Checkout(ctx, third); err != nil {
		t.Fatal(err)
	}
	if n := history(full, third); n != 3 {
		t.Errorf("full clone: %d commits of history, want 3", n)
	}
}

// TestLsRemoteParallelism: with reposerver.git.lsremote.parallelism.limit
// 1, ls-remotes of different repositories, asked for at once, run one
// after another.
func TestLsRemoteParallelism(t *testing.T) {
	srv := gitserver.New(t)
	var mu sync.Mutex
	type span struct{ from, to time.Time }
	var spans []span
	store := NewStore(Options{Root: t.TempDir(), LsRemoteParallelism: 1, Observe: func(r Request) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		spans = append(spans, span{now.Add(-r.Took), now})
	}})
	var repos []*Repo
	for i := range 6 {
		remote := srv.NewRepo(t, fmt.Sprintf("app-%d", i))
		remote.Commit(t, "c", map[string]string{"x.yaml": "x: 1\n"})
		repos = append(repos, store.Repo(remote.URL, Creds{Username: srv.Username, Password: srv.Password}))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, repo := range repos {
		wg.Go(func() {
			<-start
			if _, err := repo.Resolve(context.Background(), "HEAD"); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	if len(spans) != 6 {
		t.Fatalf("%d ls-remotes", len(spans))
	}
	for i := 1; i < len(spans); i++ {
		if spans[i].from.Before(spans[i-1].to) {
			t.Errorf("ls-remotes %d and %d ran at once", i-1, i)
		}
	}
}
