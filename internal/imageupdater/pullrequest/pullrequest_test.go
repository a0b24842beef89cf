package pullrequest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/testing/scmserver"
)

// Each provider opens one request, then updates that same request in
// place for a later change, adding labels and never opening a second.
func TestEnsureOpensThenUpdates(t *testing.T) {
	gh := scmserver.GitHub(t, "gh-token", "org", "deploy")
	gl := scmserver.GitLab(t, "gl-token", "group/sub/deploy")
	for _, c := range []struct {
		name   string
		pr     config.PullRequest
		repo   string
		token  string
		server *scmserver.Server
	}{
		{"github", config.PullRequest{Provider: config.ProviderGitHub, API: gh.URL}, origin(gh.URL) + "/org/deploy.git", "gh-token", gh},
		{"gitlab", config.PullRequest{Provider: config.ProviderGitLab, API: gl.URL + "/api/v4"}, origin(gl.URL) + "/group/sub/deploy.git", "gl-token", gl},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(c.pr, c.repo, Options{Token: c.token})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			first, err := p.Ensure(ctx, Request{Head: "image-updater/web", Base: "main", Title: "update web to 1.1.0", Body: "1.1.0", Labels: []string{"automated"}})
			if err != nil || !first.Created || first.Number != 1 || first.URL == "" {
				t.Fatalf("first: %+v %v", first, err)
			}
			again, err := p.Ensure(ctx, Request{Head: "image-updater/web", Base: "main", Title: "update web to 1.2.0", Body: "1.2.0", Labels: []string{"automated", "images"}})
			if err != nil || again.Created || again.Number != 1 {
				t.Fatalf("second: %+v %v", again, err)
			}
			prs := c.server.PullRequests()
			if len(prs) != 1 || prs[0].Title != "update web to 1.2.0" || prs[0].Body != "1.2.0" || prs[0].Edits != 1 ||
				strings.Join(prs[0].Labels, ",") != "automated,images" || prs[0].Head != "image-updater/web" || prs[0].Base != "main" {
				t.Errorf("requests held: %+v", prs)
			}
		})
	}
}

// TestNewRefuses covers the refusals, among them a token sent over
// plain HTTP or to another port than its repository's.
func TestNewRefuses(t *testing.T) {
	gh := config.PullRequest{Provider: config.ProviderGitHub}
	for _, c := range []struct {
		pr          config.PullRequest
		repo, token string
		want        string
	}{
		{gh, "https://github.com/org/deploy.git", "", "need a token"},
		{gh, "git@github.com:org/deploy.git", "t", "HTTPS repository URL"},
		{gh, "https://github.com/org.git", "t", "owner/repository"},
		{config.PullRequest{Provider: config.ProviderGitLab}, "https://gitlab.com/deploy.git", "t", "group/project"},
		{config.PullRequest{Provider: "bitbucket"}, "https://bitbucket.org/o/r.git", "t", "want github or gitlab"},
		{config.PullRequest{Provider: config.ProviderGitHub, API: "https://collector.example/api/v3"}, "https://github.com/org/deploy.git", "t", "not on the repository's host github.com"},
		{config.PullRequest{Provider: config.ProviderGitLab, API: "file:///etc"}, "https://gitlab.com/g/p.git", "t", "not an HTTP(S) address"},
		// The token never goes in the clear, nor to another port of the host.
		{config.PullRequest{Provider: config.ProviderGitHub, API: "http://github.com/api/v3"}, "https://github.com/org/deploy.git", "t", "reached over http"},
		{config.PullRequest{Provider: config.ProviderGitLab, API: "https://gitlab.example:8443/api/v4"}, "https://gitlab.example/g/p.git", "t", "not on the repository's port 443"},
		{config.PullRequest{Provider: config.ProviderGitLab, API: "https://gitlab.example/api/v4"}, "https://gitlab.example:8443/g/p.git", "t", "not on the repository's port 8443"},
	} {
		if _, err := New(c.pr, c.repo, Options{Token: c.token}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.pr.Provider, c.repo, err, c.want)
		}
	}
}

// A bad token is refused by the provider, and the error says where.
func TestEnsureBadToken(t *testing.T) {
	gh := scmserver.GitHub(t, "right", "org", "deploy")
	p, err := New(config.PullRequest{Provider: config.ProviderGitHub, API: gh.URL}, origin(gh.URL)+"/org/deploy", Options{Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ensure(context.Background(), Request{Head: "h", Base: "main", Title: "t"}); err == nil || !strings.Contains(err.Error(), "GitHub repository org/deploy: listing pull requests") {
		t.Errorf("bad token: %v", err)
	}
}

// origin is an address's scheme and host: where a provider's repositories
// are, beside its API.
func origin(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		panic(err)
	}
	return u.Scheme + "://" + u.Host
}
