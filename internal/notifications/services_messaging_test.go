package notifications_test

import (
	"net/http"
	"strings"
	"testing"
)

// Messaging services: those with an address in their options get a local
// server; Telegram and Pushover, whose clients name their hosts
// themselves, are answered through the test binary's proxy (see TestMain).
func init() {
	serviceCases = append(serviceCases,
		// Mattermost posts to /api/v4/posts with the channel id and the attachments as props.
		serviceCase{
			service: "mattermost", recipient: "deploys-channel",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) { return http.StatusCreated, `{"id":"post1"}` })
				return "apiURL: " + url + "\ntoken: $mattermost-token\n", map[string]string{"mattermost-token": "mm-token"}, rec.got
			},
			template: "mattermost:\n  attachments: '[{\"title\":\"{{.app.metadata.name}}\",\"color\":\"#18be52\"}]'\n",
			want:     []string{message, `"channel_id":"deploys-channel"`, `"title":"guestbook"`},
		},
		// Rocket.Chat logs in with the e-mail and password, then posts to the channel with the token it got.
		serviceCase{
			service: "rocketchat", recipient: "#deploys",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(r *http.Request) (int, string) {
					if strings.HasSuffix(r.URL.Path, "/api/v1/login") {
						return http.StatusOK, `{"status":"success","data":{"authToken":"rc-auth","userId":"rc-user"}}`
					}
					return http.StatusOK, `{"success":true,"message":{"_id":"m1"}}`
				})
				return "serverUrl: " + url + "\nemail: ci@example.com\npassword: $rocketchat-password\nalias: capstan\nicon: ':rocket:'\n",
					map[string]string{"rocketchat-password": "rc-secret"}, rec.got
			},
			template: "rocketchat:\n  attachments: '[{\"title\":\"{{.app.metadata.name}}\",\"color\":\"#18be52\"}]'\n",
			want:     []string{"/api/v1/login", "ci@example.com", "/api/v1/chat.postMessage", message, `"channel":"#deploys"`, `"alias":"capstan"`, `"emoji":":rocket:"`, `"title":"guestbook"`},
		},
		// Teams Workflows takes http only on loopback, and a Power Platform path (/powerautomate/) there; it answers 202.
		serviceCase{
			service: "teams-workflows", recipient: "ops",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) { return http.StatusAccepted, "" })
				return "recipientUrls:\n  ops: $workflows-url\n",
					map[string]string{"workflows-url": url + "/powerautomate/automations/direct/workflows/ops/triggers/manual/paths/invoke?api-version=1"}, rec.got
			},
			template: "teams-workflows:\n  title: '{{.app.metadata.name}} deployed'\n  themeColor: Good\n" +
				"  facts: '[{\"name\":\"Revision\",\"value\":\"{{.app.status.sync.revision}}\"}]'\n",
			want: []string{"/powerautomate/", message, `"text":"guestbook deployed"`, `"color":"Good"`, `"title":"Revision"`},
		},
		// Google Chat sends cardsV2 instead of the text (so the card repeats it) and the thread key in the query.
		serviceCase{
			service: "googlechat", recipient: "ops",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, nil)
				return "webhooks:\n  ops: $googlechat-url\n", map[string]string{"googlechat-url": url + "/v1/spaces/ops/messages?key=k&token=t"}, rec.got
			},
			template: "googlechat:\n  threadKey: '{{.app.metadata.name}}'\n" +
				"  cardsV2: '[{\"header\":{\"title\":\"{{.app.metadata.name}} deployed\"},\"sections\":[{\"widgets\":[{\"textParagraph\":" +
				"{\"text\":\"{{.app.metadata.name}} synced to {{.app.status.sync.revision}}\"}}]}]}]'\n",
			want: []string{"/v1/spaces/ops/messages", "threadKey=guestbook", message, `"title":"guestbook deployed"`},
		},
		// Webex posts the message as markdown to a person when the recipient is an e-mail address.
		serviceCase{
			service: "webex", recipient: "ops@example.com",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) { return http.StatusOK, `{"id":"msg1"}` })
				return "apiURL: " + url + "/\ntoken: $webex-token\n", map[string]string{"webex-token": "webex-bot-token"}, rec.got
			},
			want: []string{"/v1/messages", `"markdown":"` + message + `"`, `"toPersonEmail":"ops@example.com"`},
		},
		// Telegram's bot checks its token with getMe, then sends the message to the @channel as Markdown.
		serviceCase{
			service: "telegram", recipient: "deploys",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec := &recorder{answer: func(r *http.Request) (int, string) {
					if strings.HasSuffix(r.URL.Path, "/getMe") {
						return http.StatusOK, `{"ok":true,"result":{"id":1,"is_bot":true,"first_name":"Capstan","username":"capstan_bot"}}`
					}
					return http.StatusOK, `{"ok":true,"result":{"message_id":7,"date":1700000000,"chat":{"id":-1001,"type":"channel","title":"deploys"}}}`
				}}
				hosted.Route("api.telegram.org", rec)
				return "token: $telegram-token\n", map[string]string{"telegram-token": "123456:capstan-test"}, rec.got
			},
			want: []string{"/bot123456:capstan-test/getMe", "/bot123456:capstan-test/sendMessage", message, "chat_id=%40deploys", "parse_mode=Markdown"},
		},
		// Pushover posts a form to /1/messages.json and wants status 1 and the app-limit headers back.
		serviceCase{
			service: "pushover", recipient: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec := &recorder{answer: func(*http.Request) (int, string) { return http.StatusOK, `{"status":1,"request":"req-1"}` }}
				hosted.Route("api.pushover.net", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Limit-App-Limit", "10000")
					w.Header().Set("X-Limit-App-Remaining", "9999")
					w.Header().Set("X-Limit-App-Reset", "1700000000")
					rec.ServeHTTP(w, r)
				}))
				return "token: $pushover-token\n", map[string]string{"pushover-token": "azGDORePK8gMaC0QOYAMyEEuzJnyUi"}, rec.got
			},
			want: []string{"/1/messages.json", message, "token=azGDORePK8gMaC0QOYAMyEEuzJnyUi", "user=uQiRzpo4DXghDmr9QzzfQu27cmVRsG"},
		},
	)
}
