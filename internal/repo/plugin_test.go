package repo

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

const tagger = `kind: ConfigManagementPlugin
metadata: {name: tagger}
spec:
  discover: {fileName: "*.tag"}
  parameters:
    static: [{name: colour, string: blue}]
  generate:
    command: [sh, -c]
    args: ['printf "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-%s\n" "$(cat *.tag)" "$ARGOCD_APP_PROJECT_NAME"']
`

// TestPluginSources: a directory a plugin's discovery rule claims renders
// through the plugin, even with render workers (plugins run beside the
// repo server, not in its workers); one it does not claim keeps its type;
// AppDetails answers with the plugin's parameters.
func TestPluginSources(t *testing.T) {
	remote := gitserver.NewLocalRepo(t)
	remote.Commit(t, "c", map[string]string{
		"tagged/app.tag":   "green",
		"plain/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
		"chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 1.0.0\n",
	})
	sockets := cmpserver.SocketDir(t)
	cmpserver.Serve(t, sockets, tagger)
	ctx := context.Background()
	for name, svc := range map[string]*Service{
		"in-process": NewService(Options{Root: t.TempDir(), Plugins: plugin.Options{SocketDir: sockets}}),
		"workers":    isolated(t, Options{Plugins: plugin.Options{SocketDir: sockets}}, 512<<20),
	} {
		for path, want := range map[string]string{"tagged": "green-team", "plain": "plain"} {
			req := &Request{AppName: "a", Project: "team", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: path}}}
			resp, err := svc.Render(ctx, req)
			if err != nil {
				t.Fatalf("%s %s: %v", name, path, err)
			}
			if len(resp.Objects) != 1 || resp.Objects[0].GetName() != want {
				t.Errorf("%s %s: objects %v, want %s", name, path, resp.Objects, want)
			}
		}
	}
	svc := NewService(Options{Root: t.TempDir(), Plugins: plugin.Options{SocketDir: sockets}})
	details, err := svc.AppDetails(ctx, &AppDetailsRequest{Source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "tagged"}})
	if err != nil {
		t.Fatal(err)
	}
	if details.Type != v1alpha1.SourceTypePlugin || details.Plugin == nil || len(details.Plugin.ParametersAnnouncement) != 1 ||
		!strings.Contains(string(details.Plugin.ParametersAnnouncement[0]), `"colour"`) {
		t.Errorf("AppDetails = %+v", details)
	}
	if details, err := svc.AppDetails(ctx, &AppDetailsRequest{Source: v1alpha1.ApplicationSource{RepoURL: remote.URL, Path: "chart"}}); err != nil || details.Type != v1alpha1.SourceTypeHelm {
		t.Errorf("AppDetails of a chart with a plugin listening = %+v, %v", details, err)
	}
}

// TestPluginGitCreds: a plugin asking for Git credentials (provideGitCreds)
// reads the source's private repository with the credentials of its
// repository Secret, through the repo server's ask-pass socket.
func TestPluginGitCreds(t *testing.T) {
	bin := t.TempDir() // git's GIT_ASKPASS=argocd: Argo CD's program
	if err := os.Symlink(toolbin.Find(t, "CAPSTAN_ARGOCD_BIN", filepath.Join("bin", "argocd", "argocd"), "argocd"), filepath.Join(bin, "argocd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	sockets := cmpserver.SocketDir(t)
	cmpserver.Serve(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: cloner}
spec:
  provideGitCreds: true
  generate:
    command: [sh, -c]
    args: ['set -e; head=$(git ls-remote "$ARGOCD_APP_SOURCE_REPO_URL" HEAD | cut -f1); test -n "$head"; printf "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: at-%s}\n" "$head"']
`)
	ask, err := plugin.ListenAskPass(filepath.Join(t.TempDir(), "ask.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ask.Close()
	srv := gitserver.New(t)
	remote := srv.NewRepo(t, "private")
	head := remote.Commit(t, "one", map[string]string{"app/x": "x"})
	svc := NewService(Options{Root: t.TempDir(), Plugins: plugin.Options{SocketDir: sockets, AskPass: ask},
		Credentials: credsByURL{remote.URL: {Username: srv.Username, Password: srv.Password}}})
	resp, err := svc.Render(context.Background(), &Request{AppName: "app", Sources: []v1alpha1.ApplicationSource{{RepoURL: remote.URL, Path: "app",
		Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "cloner"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Objects) != 1 || resp.Objects[0].GetName() != "at-"+head {
		t.Errorf("objects %v, want the ConfigMap at-%s", names(resp.Objects), head)
	}
}
