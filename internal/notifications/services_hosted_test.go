package notifications_test

import (
	"net/http"
	"testing"
)

// Services whose clients have the hosted address built in, reached
// through the test binary's proxy (see TestMain).
func init() {
	serviceCases = append(serviceCases,
		serviceCase{
			service: "pagerdutyv2", recipient: "web-team",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec := &recorder{answer: func(*http.Request) (int, string) {
					return http.StatusAccepted, `{"status":"success","message":"Event processed","dedup_key":"k"}`
				}}
				hosted.Route("events.pagerduty.com", rec)
				return "serviceKeys:\n  web-team: $pd-key\n", map[string]string{"pd-key": "routing-key-1"}, rec.got
			},
			template: "pagerdutyv2:\n  summary: '{{.app.metadata.name}} synced'\n  severity: info\n  source: '{{.app.metadata.name}}'\n",
			want:     []string{`"routing_key":"routing-key-1"`, `"summary":"guestbook synced"`},
		},
	)
}
