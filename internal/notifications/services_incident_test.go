package notifications_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
)

// Incident, alerting and deployment-tracking services: those with an
// address in their options get a local server, the others (PagerDuty's
// REST API, Opsgenie's https-only host) the test binary's proxy.
func init() {
	serviceCases = append(serviceCases,
		// Opsgenie: an alert for the recipient team, through the EU host.
		serviceCase{
			service: "opsgenie", recipient: "ops-team",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec := &recorder{answer: func(*http.Request) (int, string) {
					return http.StatusAccepted, `{"result":"Request will be processed","took":0.1,"requestId":"r-1"}`
				}}
				hosted.Route("api.eu.opsgenie.com", rec)
				return "apiUrl: api.eu.opsgenie.com\napiKeys:\n  ops-team: $opsgenie-key\n", map[string]string{"opsgenie-key": "genie-key-1"}, rec.got
			},
			template: "opsgenie:\n  description: '{{.app.metadata.name}} is at {{.app.status.sync.revision}}'\n  priority: P3\n" +
				"  alias: '{{.app.metadata.name}}-sync'\n  tags: [capstan, '{{.app.metadata.name}}']\n",
			want: []string{`"message":"` + message, `"description":"guestbook is at ` + revision, `"priority":"P3"`,
				`"alias":"guestbook-sync"`, `"tags":["capstan","guestbook"]`, `"id":"ops-team"`},
		},
		// PagerDuty's REST API (v1): an incident on the recipient service.
		serviceCase{
			service: "pagerduty", recipient: "PWEB123",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec := &recorder{answer: func(*http.Request) (int, string) {
					return http.StatusCreated, `{"incident":{"id":"PINC1","type":"incident","incident_number":7,"title":"guestbook rolled out"}}`
				}}
				hosted.Route("api.pagerduty.com", rec)
				return "token: $pd-api-token\nfrom: deploys@example.com\nserviceId: PWEB123\n", map[string]string{"pd-api-token": "pd-token-1"}, rec.got
			},
			template: "pagerduty:\n  title: '{{.app.metadata.name}} rolled out'\n  urgency: low\n  body: 'now at {{.app.status.sync.revision}}'\n  priorityId: PPRIO1\n",
			want: []string{"/incidents", `"title":"guestbook rolled out"`, `"urgency":"low"`, `"details":"now at ` + revision,
				`"id":"PWEB123"`, `"id":"PPRIO1"`},
		},
		// Alertmanager: one alert posted to the target, with basic auth.
		serviceCase{
			service: "alertmanager",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, nil)
				return "targets: ['" + strings.TrimPrefix(url, "http://") + "']\nscheme: http\napiPath: /api/v2/alerts\n" +
					"basicAuth:\n  username: capstan\n  password: $am-password\n", map[string]string{"am-password": "am-secret"}, rec.got
			},
			template: "alertmanager:\n  labels:\n    alertname: AppSynced\n    app: '{{.app.metadata.name}}'\n" +
				"  annotations:\n    summary: '{{.app.metadata.name}} synced to {{.app.status.sync.revision}}'\n" +
				"  generatorURL: '{{.context.argocdUrl}}/applications/{{.app.metadata.name}}'\n",
			want: []string{"/api/v2/alerts", `"alertname":"AppSynced"`, `"app":"guestbook"`, `"summary":"` + message,
				`"generatorURL":"https://cd.example.com/applications/guestbook"`},
		},
		// Grafana: an annotation tagged with the recipient's "|"-separated tags.
		serviceCase{
			service: "grafana", recipient: "deploys|guestbook",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) { return http.StatusOK, `{"message":"Annotation added","id":1}` })
				return "apiUrl: " + url + "/api\napiKey: $grafana-key\n", map[string]string{"grafana-key": "glsa_test"}, rec.got
			},
			want: []string{"/api/annotations", `"text":"` + message, `"tags":["deploys","guestbook"]`},
		},
		// GitHub, as a GitHub App of GitHub Enterprise: a commit status and a
		// deployment with its status, for the app's revision (its repository
		// named by repoURLPath: the app's own is a local one).
		serviceCase{
			service: "github",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				key, err := rsa.GenerateKey(rand.Reader, 2048)
				if err != nil {
					t.Fatal(err)
				}
				pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
				rec, url := serve(t, func(r *http.Request) (int, string) {
					switch {
					case strings.HasSuffix(r.URL.Path, "/access_tokens"):
						return http.StatusCreated, `{"token":"ghs_installation","expires_at":"2099-01-01T00:00:00Z"}`
					case strings.HasSuffix(r.URL.Path, "/deployments") && r.Method == http.MethodGet:
						return http.StatusOK, `[]`
					case strings.HasSuffix(r.URL.Path, "/pulls"):
						return http.StatusOK, `[{"number":7}]`
					case strings.HasSuffix(r.URL.Path, "/issues/7/comments") && r.Method == http.MethodGet:
						return http.StatusOK, `[{"id":99,"body":"older text\n<!-- argocd-notifications guestbook-sync -->"}]`
					case strings.HasSuffix(r.URL.Path, "/deployments"):
						return http.StatusCreated, `{"id":42}`
					}
					return http.StatusCreated, `{"id":1}`
				})
				return "appID: 12345\ninstallationID: 67890\nprivateKey: $github-key\nenterpriseBaseURL: " + url + "/api/v3\n",
					map[string]string{"github-key": string(pemKey)}, rec.got
			},
			template: "github:\n  repoURLPath: 'https://github.com/shop/guestbook'\n  status:\n    state: success\n    label: 'continuous-delivery/{{.app.metadata.name}}'\n" +
				"    targetURL: '{{.context.argocdUrl}}/applications/{{.app.metadata.name}}'\n" +
				"  deployment:\n    state: success\n    environment: production\n" +
				"    environmentURL: 'https://{{.app.metadata.name}}.example.com'\n    requiredContexts: []\n" +
				"  pullRequestComment:\n    content: 'Deployed {{.app.metadata.name}}'\n    commentTag: guestbook-sync\n" +
				"  checkRun:\n    name: 'argocd/{{.app.metadata.name}}'\n    conclusion: success\n    output:\n      title: synced\n      summary: '{{.app.status.sync.status}}'\n",
			want: []string{"/api/v3/app/installations/67890/access_tokens",
				"/repos/shop/guestbook/statuses/" + revision, `"state":"success"`, `"context":"continuous-delivery/guestbook"`,
				`"description":"` + message, `"target_url":"https://cd.example.com/applications/guestbook"`,
				`"ref":"` + revision, `"environment":"production"`,
				"/repos/shop/guestbook/deployments/42/statuses", `"environment_url":"https://guestbook.example.com"`,
				// the pull requests of the commit, and the tagged comment
				// already on request 7 edited rather than a second one added
				"/repos/shop/guestbook/commits/" + revision + "/pulls", "/repos/shop/guestbook/issues/comments/99",
				`"body":"Deployed guestbook\n`, "argocd-notifications guestbook-sync",
				"/repos/shop/guestbook/check-runs", `"name":"argocd/guestbook"`, `"head_sha":"` + revision, `"conclusion":"success"`,
				`"status":"completed"`, `"summary":"Synced"`},
			never: []string{"POST /api/v3/repos/shop/guestbook/issues/7/comments"},
		},
		// New Relic: a deployment marker on the recipient application; the
		// message is its description.
		serviceCase{
			service: "newrelic", recipient: "4242",
			start: func(t *testing.T) (string, map[string]string, func() []request) {
				rec, url := serve(t, func(*http.Request) (int, string) { return http.StatusCreated, `{"deployment":{"id":1}}` })
				return "apiURL: " + url + "/\napiKey: $newrelic-key\n", map[string]string{"newrelic-key": "NRAK-test"}, rec.got
			},
			template: "newrelic:\n  revision: '{{.app.status.sync.revision}}'\n  changelog: 'synced {{.app.metadata.name}}'\n  user: capstan\n",
			want: []string{"/v2/applications/4242/deployments.json", `"revision":"` + revision, `"changelog":"synced guestbook"`,
				`"description":"` + message, `"user":"capstan"`},
		},
	)
}
