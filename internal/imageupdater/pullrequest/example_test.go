package pullrequest_test

import (
	"fmt"

	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/imageupdater/pullrequest"
)

// A provider needs an HTTPS repository and a token; the API address
// follows the repository's host unless the settings name one.
func ExampleNew() {
	github := config.PullRequest{Provider: config.ProviderGitHub, Labels: []string{"automated"}}
	for _, c := range []struct{ repo, token string }{
		{"https://github.com/org/deploy.git", "ghp_token"},
		{"git@github.com:org/deploy.git", "ghp_token"},
		{"https://github.com/org/deploy.git", ""},
	} {
		_, err := pullrequest.New(github, c.repo, pullrequest.Options{Token: c.token})
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// repository "git@github.com:org/deploy.git": pull requests need an HTTPS repository URL
	// pull requests need a token: the write-back's credentials hold no password or token (SSH keys cannot open pull requests)
}
