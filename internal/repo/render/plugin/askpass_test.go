package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
	"github.com/capstan-cd/capstan/internal/testing/cmpserver"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// cloner reads a private repository with git when given its credentials.
const cloner = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: cloner
spec:
  provideGitCreds: true
  generate:
    command: [sh, -c]
    args:
      - |
        set -e
        head=$(git ls-remote "$ARGOCD_ENV_REMOTE" HEAD | cut -f1)
        test -n "$head"
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\ndata: {head: "%s"}\n' "$head"
`

// TestProvideGitCreds: a plugin whose plugin.yaml sets provideGitCreds
// reads the source's private repository with git, the credentials asked
// through Argo CD's own ask-pass program, under Argo CD's plugin server and
// Capstan's; without them, or without provideGitCreds, git is refused.
func TestProvideGitCreds(t *testing.T) {
	// git runs GIT_ASKPASS=argocd: Argo CD's program, found in PATH.
	bin := t.TempDir()
	if err := os.Symlink(toolbin.Find(t, "CAPSTAN_ARGOCD_BIN", filepath.Join("bin", "argocd", "argocd"), "argocd"), filepath.Join(bin, "argocd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "private")
	head := remote.Commit(t, "one", map[string]string{"a.txt": "a"})
	ask, err := plugin.ListenAskPass(filepath.Join(t.TempDir(), "ask.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ask.Close()
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			dir := cmpserver.SocketDir(t)
			start(t, dir, cloner)
			start(t, dir, strings.Replace(strings.Replace(cloner, "cloner", "uninvited", 1), "provideGitCreds: true", "provideGitCreds: false", 1))
			c := plugin.New(plugin.Options{SocketDir: dir, AskPass: ask})
			src := func(name string, creds *plugin.GitCreds) *plugin.Source {
				return &plugin.Source{Root: checkout(t, map[string]string{"app/x": ""}), Path: "app", GitCreds: creds,
					Plugin: &v1alpha1.ApplicationSourcePlugin{Name: name, Env: v1alpha1.Env{{Name: "REMOTE", Value: remote.URL}}}}
			}
			creds := &plugin.GitCreds{Username: srv.Username, Password: srv.Password}
			objs, err := c.Render(context.Background(), src("cloner", creds))
			if err != nil {
				t.Fatal(err)
			}
			if got := objs[0].Object["data"].(map[string]any)["head"]; got != head {
				t.Errorf("the plugin read HEAD %v, want %s", got, head)
			}
			if _, err := c.Render(context.Background(), src("cloner", nil)); err == nil {
				t.Error("a repository without credentials was read")
			}
			if _, err := c.Render(context.Background(), src("uninvited", creds)); err == nil {
				t.Error("a plugin without provideGitCreds got the credentials")
			}
		})
	}
}

// TestAskPassAnswer: Capstan's ask-pass client (argocd-git-ask-pass in a
// sidecar running Capstan) answers git's questions with the credentials
// granted to its nonce, and nothing for another nonce.
func TestAskPassAnswer(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "ask.sock")
	ask, err := plugin.ListenAskPass(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ask.Close()
	env, release := ask.Grant(plugin.GitCreds{Username: "git-user", Password: "s3cret"})
	defer release()
	nonce := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, plugin.AskPassNonceEnv+"="); ok {
			nonce = v
		}
	}
	ctx := context.Background()
	if got, err := plugin.AskPassAnswer(ctx, socket, nonce, "Username for 'https://git.example.com': "); err != nil || got != "git-user" {
		t.Errorf("username: %q, %v", got, err)
	}
	if got, err := plugin.AskPassAnswer(ctx, socket, nonce, "Password for 'https://git-user@git.example.com': "); err != nil || got != "s3cret" {
		t.Errorf("password: %q, %v", got, err)
	}
	if got, err := plugin.AskPassAnswer(ctx, socket, "guessed", "Password for x: "); err == nil {
		t.Errorf("another nonce was answered %q", got)
	}
	release()
	if _, err := plugin.AskPassAnswer(ctx, socket, nonce, "Password for x: "); err == nil {
		t.Error("a released nonce was still answered")
	}
}
