package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://github.com/argoproj/argocd-example-apps.git", true},
		{"http://gitea.local:3000/org/repo", true},
		{"https://user:token@git.example.com/org/repo.git", true},
		{"ssh://git@github.com:2222/org/repo.git", true},
		{"git@github.com:org/repo.git", true},
		{"github.com:org/repo.git", true},
		{"git://git.example.com/repo.git", true},
		{"file:///srv/git/repo.git", true},
		{"git@[::1]:org/repo.git", true},

		{"", false},
		{"--upload-pack=touch /tmp/pwned", false},
		{"-c core.sshCommand=touch /tmp/pwned", false},
		{"--config=core.sshCommand=touch /tmp/pwned", false},
		{"ext::sh -c touch% /tmp/pwned", false},
		{"ext::sh", false},
		{"fd::3", false},
		{"ftp://example.com/repo.git", false},
		{"https://-oProxyCommand=x/repo", false},
		{"ssh://-oProxyCommand=touch%20pwned/repo", false},
		{"ssh://-user@host/repo", false},
		{"-oProxyCommand=x:repo", false},
		{"git@-oProxyCommand=x:repo", false},
		{"git@host:-repo", false},
		{"https://github.com/org/repo\n--upload-pack=x", false},
		{"https://github.com/org/ repo", false},
		{"file://remote-host/srv/repo.git", false},
		{"https://", false},
		{"/srv/git/repo.git", false},
		{"repo", false},
		{"https://example.com/" + strings.Repeat("a", 3000), false},
	} {
		err := ValidateURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidURL) {
			t.Errorf("ValidateURL(%q) = %v, want ErrInvalidURL", tc.url, err)
		}
	}
}

func TestValidateURLNeverShowsAPassword(t *testing.T) {
	err := ValidateURL("ftp://user:s3cret@example.com/repo")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("got %v, want an error without the password", err)
	}
}

func TestValidateRefNameAndRevision(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"main", true}, {"feature/x-1", true}, {"release-1.2", true}, {"v1.0.0", true},
		{"", false}, {"-x", false}, {"--output=/tmp/x", false}, {"a..b", false}, {"a b", false},
		{"a:b", false}, {"refs/heads/*", false}, {"a~1", false}, {"a^", false}, {"a?", false},
		{"a[", false}, {"a\\b", false}, {"x@{1}", false}, {"a//b", false}, {"/a", false},
		{"a/", false}, {"a.", false}, {".a", false}, {"a/.b", false}, {"a.lock", false},
		{"@", false}, {"a\x00b", false}, {"a\tb", false},
	} {
		if err := ValidateRefName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateRefName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	for _, rev := range []string{"", "HEAD", "main", "refs/heads/main", "refs/tags/v1", "0123abcd", strings.Repeat("a", 40),
		"1.0.*", ">=1.2, <2.0", "~1.4"} { // version constraints on tags

		if err := ValidateRevision(rev); err != nil {
			t.Errorf("ValidateRevision(%q) = %v, want nil", rev, err)
		}
	}
	for _, rev := range []string{"--output=/tmp/x", "-n", "HEAD:path", "main..other", "-1.0.*"} {
		if err := ValidateRevision(rev); err == nil {
			t.Errorf("ValidateRevision(%q) = nil, want an error", rev)
		}
	}
}

// TestInjectionPayloadsRunNothing drives git with the payloads of a
// command-injection attempt through every operation that reaches the
// network, and checks that no command ran: each payload would create a
// marker file if git ever executed it.
func TestInjectionPayloadsRunNothing(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	touch := "touch " + marker
	payloads := []string{
		"--upload-pack=" + touch,
		"--upload-pack=" + touch + " x",
		"-c core.sshCommand=" + touch,
		"--config=core.sshCommand=" + touch,
		"ext::sh -c " + strings.ReplaceAll(touch, " ", "% "),
		"ext::" + touch,
		"ssh://-oProxyCommand=" + strings.ReplaceAll(touch, " ", "%20") + "/repo",
		"-oProxyCommand=" + touch + ":repo",
	}
	sha := strings.Repeat("1", 40)
	store := newStore(t)
	w := NewWriter(t.TempDir(), 0)
	ctx := context.Background()
	for _, p := range payloads {
		r := store.Repo(p, Creds{})
		_, errResolve := r.Resolve(ctx, "main")
		_, errCheckout := r.Checkout(ctx, sha) // a full SHA skips ls-remote
		_, errRefs := r.LsRemote(ctx, true)
		_, errCommit := w.Commit(ctx, p, Creds{}, Change{Base: "main", Edit: func(string) error { return nil }})
		for i, err := range []error{errResolve, errCheckout, errRefs, errCommit} {
			if !errors.Is(err, ErrInvalidURL) {
				t.Errorf("payload %q, operation %d: got %v, want ErrInvalidURL", p, i, err)
			}
		}
	}
	// Revisions git could take for options never reach it either.
	for _, rev := range []string{"--output=" + marker, "-" + sha[:39]} {
		if _, err := store.Repo("file://"+dir+"/none.git", Creds{}).Checkout(ctx, rev); err == nil {
			t.Errorf("Checkout(%q) succeeded", rev)
		}
	}
	if _, err := w.Commit(ctx, "file://"+dir+"/none.git", Creds{}, Change{Base: "--output=" + marker, Edit: func(string) error { return nil }}); err == nil {
		t.Error("a branch named like an option was accepted")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a payload ran: %s exists", marker)
	}
}

// TestGitRefusesForbiddenTransportsItself checks the second line of
// defence: even a command built without ValidateURL, git is told which
// transports it may use, so ext:: runs nothing.
func TestGitRefusesForbiddenTransportsItself(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	err := runGit(context.Background(), command{binary: "git"}, func(io.Reader) error { return nil }, "ls-remote", "--", "ext::sh -c touch% "+marker)
	if err == nil {
		t.Fatal("git ran an ext:: remote")
	}
	if _, statErr := os.Stat(marker); !os.IsNotExist(statErr) {
		t.Fatalf("ext:: ran a command: %s exists (%v)", marker, fmt.Sprint(err))
	}
}
