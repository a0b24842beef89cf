package server

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestWriteRepositories manages the source hydrator's push credentials
// through the API as Argo CD's write-repositories and write-repocreds
// services do: stored as repository-write and repo-write-creds Secrets,
// which the hydrator's lookup finds and the read lookup does not, their
// connection tested before they are stored, never shown, and answered
// 501 "hydrator is disabled" while the hydrator is off.
func TestWriteRepositories(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	git := gitserver.New(t)
	remote := git.NewRepo(t, "gitops")
	remote.Commit(t, "first", map[string]string{"README.md": "hello\n"})

	off := start(t, true)
	for _, path := range []string{"/api/v1/write-repositories", "/api/v1/write-repocreds"} {
		resp := off.send(ctx, "GET", path, "", off.adminToken())
		if msg := readAll(t, resp); resp.StatusCode != 501 || !strings.Contains(msg, "hydrator is disabled") {
			t.Errorf("GET %s with the hydrator off: %d %s", path, resp.StatusCode, msg)
		}
	}

	f := startWith(t, Options{Insecure: true, HydratorEnabled: true})
	admin := f.adminToken()
	wrong := fmt.Sprintf(`{"repo":%q,"username":%q,"password":"wrong"}`, remote.URL, git.Username)
	if code := f.call("POST", "/api/v1/write-repositories", wrong, admin, nil); code != 400 {
		t.Errorf("push credentials that cannot reach the repository: %d, want 400", code)
	}
	if code := f.call("POST", "/api/v1/write-repositories/"+url.PathEscape(remote.URL)+"/validate", wrong, admin, nil); code != 400 {
		t.Errorf("validating wrong push credentials: %d, want 400", code)
	}
	body := fmt.Sprintf(`{"repo":%q,"username":%q,"password":%q}`, remote.URL, git.Username, git.Password)
	if code := f.call("POST", "/api/v1/write-repositories", body, admin, nil); code != 200 {
		t.Fatalf("adding push credentials: %d", code)
	}
	creds := fmt.Sprintf(`{"url":"https://git.example.com/org","username":"bot","password":%q}`, git.Password)
	if code := f.call("POST", "/api/v1/write-repocreds", creds, admin, nil); code != 200 {
		t.Fatalf("adding a push credential template: %d", code)
	}
	for _, path := range []string{"/api/v1/write-repositories", "/api/v1/write-repocreds"} {
		resp := f.send(ctx, "GET", path, "", admin)
		if msg := readAll(t, resp); resp.StatusCode != 200 || strings.Contains(msg, git.Password) || !strings.Contains(msg, `"username"`) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, msg)
		}
	}
	stored, err := settings.RepositorySecrets(ctx, f.c, f.ns, v1alpha1.SecretTypeRepositoryWrite)
	if err != nil || len(stored) != 1 || stored[0].Password != git.Password || !stored[0].Write {
		t.Fatalf("the repository-write Secrets: %+v, %v", stored, err)
	}
	push, err := (&settings.RepoCredentials{Reader: f.c, Namespace: f.ns, Write: true}).ForRepo(ctx, remote.URL, "")
	if err != nil || push.Password != git.Password {
		t.Errorf("the hydrator's lookup: %+v, %v", push, err)
	}
	read, err := (&settings.RepoCredentials{Reader: f.c, Namespace: f.ns}).ForRepo(ctx, remote.URL, "")
	if err != nil || read.Password != "" {
		t.Errorf("the read lookup found push credentials: %+v, %v", read, err)
	}
	template, err := (&settings.RepoCredentials{Reader: f.c, Namespace: f.ns, Write: true}).ForRepo(ctx, "https://git.example.com/org/app.git", "")
	if err != nil || template.Username != "bot" {
		t.Errorf("the push credential template: %+v, %v", template, err)
	}
	if code := f.call("DELETE", "/api/v1/write-repositories/"+url.PathEscape(remote.URL), "", admin, nil); code != 200 {
		t.Errorf("deleting push credentials: %d", code)
	}
	if stored, _ := settings.RepositorySecrets(ctx, f.c, f.ns, v1alpha1.SecretTypeRepositoryWrite); len(stored) != 0 {
		t.Errorf("still stored: %+v", stored)
	}
}
