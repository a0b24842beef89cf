package notifications_test

import (
	"net/http"
	"testing"
)

// Chat services reached at an address their options name.
func init() {
	serviceCases = append(serviceCases,
		serviceCase{
			service: "slack", recipient: "deploys",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) {
					return http.StatusOK, `{"ok":true,"channel":"C1","ts":"1700000000.000100"}`
				})
				// signingSecret is read (it verifies Slack's calls to an
				// app, which notifications do not receive); disableUnfurl
				// turns off link and media previews of the message.
				return "token: $slack-token\napiURL: " + url + "/api/\nusername: capstan\nsigningSecret: $slack-signing\ndisableUnfurl: true\n",
					map[string]string{"slack-token": "xoxb-test", "slack-signing": "8f742231b10e8888abcd99yyyzzz85a5"}, rec.got
			},
			template: "slack:\n  attachments: '[{\"title\":\"{{.app.metadata.name}}\",\"color\":\"good\"}]'\n",
			want:     []string{message, "deploys", `"title":"guestbook"`, "unfurl_links=false", "unfurl_media=false"},
		},
		serviceCase{
			service: "teams", recipient: "ops",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) { return http.StatusOK, "1" })
				return "recipientUrls:\n  ops: $teams-url\n", map[string]string{"teams-url": url + "/webhookb2/ops"}, rec.got
			},
			template: "teams:\n  title: '{{.app.metadata.name}} deployed'\n  facts: '[{\"name\":\"Revision\",\"value\":\"{{.app.status.sync.revision}}\"}]'\n",
			want:     []string{message, "guestbook deployed", `"name":"Revision"`},
		},
	)
}
