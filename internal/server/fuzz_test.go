package server

import (
	"net/http"
	"testing"
)

// FuzzParsePush reads Git providers' push webhooks, which anyone who can
// reach /api/webhook sends; a secret is set for none of them here, so
// every well-formed payload is read.
func FuzzParsePush(f *testing.F) {
	f.Add("X-GitHub-Event", "push", githubPush)
	f.Add("X-Gitlab-Event", "Push Hook", `{"ref":"refs/heads/main","project":{"web_url":"https://gitlab.com/o/a","git_http_url":"https://gitlab.com/o/a.git","default_branch":"main"}}`)
	f.Add("X-Event-Key", "repo:push", `{"push":{"changes":[{"new":{"name":"main","type":"branch"}}]},"repository":{"links":{"html":{"href":"https://bitbucket.org/o/a"}}}}`)
	f.Add("X-Gitea-Event", "push", `{"ref":"refs/heads/main","repository":{"html_url":"https://gitea.local/o/a","clone_url":"https://gitea.local/o/a.git"}}`)
	f.Add("X-GitHub-Event", "push", `{"ref":`)
	f.Fuzz(func(t *testing.T, header, event, body string) {
		h := http.Header{}
		h.Set(header, event)
		_, _ = parsePush(h, []byte(body), func(string) string { return "" })
	})
}
