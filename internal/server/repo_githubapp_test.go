package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// TestGitHubAppRepositoryCredentials: a repository and a credential
// template whose credentials are a GitHub App reach a git server that
// takes the app's installation token (user x-access-token), through the
// repo server; the key is never shown, and an installation the app does
// not have is refused with GitHub's answer.
func TestGitHubAppRepositoryCredentials(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	app := scmserver.NewGitHubApp(t, 7, 70)
	github := scmserver.GitHubOrg(t, "unused", "shop")
	github.InstallApp(app)
	git := gitserver.New(t)
	remote := git.NewRepo(t, "web")
	remote.Commit(t, "web", map[string]string{"README": "web\n"})
	git.Username, git.Password = "x-access-token", "ghs_installation_70"

	credentials := func(installation string) string {
		b, _ := json.Marshal(map[string]any{"githubAppID": "7", "githubAppInstallationID": json.RawMessage(installation),
			"githubAppPrivateKey": string(app.PrivateKeyPEM), "githubAppEnterpriseBaseUrl": github.URL})
		return strings.TrimSuffix(string(b), "}")
	}
	escaped := url.PathEscape(remote.URL)
	admin := f.adminToken()
	var failed struct{ Message string }
	if code := f.call("POST", "/api/v1/repositories", credentials("71")+`,"repo":"`+remote.URL+`"}`, admin, &failed); code != http.StatusBadRequest ||
		!strings.Contains(failed.Message, "installation 71") {
		t.Errorf("an installation the app does not have: %d %q", code, failed.Message)
	}
	if code := f.call("POST", "/api/v1/repositories", credentials("70")+`,"repo":"`+remote.URL+`"}`, admin, nil); code != http.StatusOK {
		t.Fatalf("a repository as the GitHub App: %d", code)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	f.call("GET", "/api/v1/repositories", "", admin, &list)
	if len(list.Items) != 1 || list.Items[0]["githubAppPrivateKey"] != nil || list.Items[0]["githubAppID"] == nil {
		t.Errorf("the repository listed: %v", list.Items)
	}
	// The repo server, reading the stored Secret, fetches as the app.
	renderer := repo.NewService(repo.Options{Root: t.TempDir(), Credentials: &settings.RepoCredentials{Reader: f.c, Namespace: f.ns}})
	if _, err := renderer.Resolve(context.Background(), &repo.ResolveRequest{RepoURL: remote.URL, Revision: "HEAD"}); err != nil {
		t.Errorf("the repo server resolving HEAD as the app: %v", err)
	}
	if code := f.call("DELETE", "/api/v1/repositories/"+escaped, "", admin, nil); code != http.StatusOK {
		t.Fatalf("deleting: %d", code)
	}

	// A credential template of the server: a repository under it needs no
	// credentials of its own.
	if code := f.call("POST", "/api/v1/repocreds", credentials("70")+`,"url":"`+git.URL+`"}`, admin, nil); code != http.StatusOK {
		t.Fatalf("a credential template as the GitHub App: %d", code)
	}
	if code := f.call("POST", "/api/v1/repositories/"+escaped+"/validate", `{}`, admin, &failed); code != http.StatusOK {
		t.Errorf("validating a repository the template covers: %d %s", code, failed.Message)
	}
}
