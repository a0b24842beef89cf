package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestAPIContentTypes: with server.api.content.types set, a REST call
// that changes something must send one of its types (or the UI's YAML),
// whatever its credentials; reads, bodiless calls and Git webhooks are
// not held to it.
func TestAPIContentTypes(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWith(t, Options{Insecure: true, APIContentTypes: []string{"application/json"}})
	token := f.adminToken()
	app := `{"metadata":{"name":"typed"},"spec":{"destination":{"server":"https://kubernetes.default.svc","namespace":"x"},"source":{"repoURL":"https://example.com/r.git","path":"x"}}}`
	for _, tc := range []struct {
		name, method, path, contentType, body string
		refused                               bool
	}{
		{"text/plain create", "POST", "/api/v1/applications", "text/plain", app, true},
		{"form login", "POST", "/api/v1/session", "application/x-www-form-urlencoded", "username=admin", true},
		{"a body without a type", "POST", "/api/v1/applications", "", app, true},
		{"JSON with a charset", "POST", "/api/v1/applications", "application/json; charset=utf-8", app, false},
		{"the UI's YAML", "PUT", "/api/v1/applications/typed", "application/yaml", strings.ReplaceAll(app, `"x"}}}`, `"y"}}}`), false},
		{"a read", "GET", "/api/v1/applications", "text/plain", "", false},
		{"a bodiless delete", "DELETE", "/api/v1/applications/none", "", "", false},
		{"a Git webhook", "POST", "/api/webhook", "application/x-www-form-urlencoded", "payload=%7B%7D", false},
		{"Dex's login form", "POST", "/api/dex/auth/local/login", "application/x-www-form-urlencoded", "login=a&password=b", false},
	} {
		req, _ := http.NewRequest(tc.method, f.base+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+token)
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if refused := resp.StatusCode == http.StatusUnsupportedMediaType; refused != tc.refused {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
		if tc.refused && !strings.Contains(body, "Invalid content type") {
			t.Errorf("%s: %s", tc.name, body)
		}
	}
}
