package apiclient

import (
	"net/url"
	"testing"
)

func TestMatchFindsTheRouteAndItsParameters(t *testing.T) {
	for _, tc := range []struct {
		method, path, pattern string
		params                map[string]string
	}{
		{"GET", "/api/v1/applications/guestbook", "/api/v1/applications/{name}", map[string]string{"name": "guestbook"}},
		{"POST", "/api/v1/applications/guestbook/sync", "/api/v1/applications/{name}/sync", map[string]string{"name": "guestbook"}},
		{"DELETE", "/api/v1/repositories/" + url.PathEscape("https://git.example.com/a.git"), "/api/v1/repositories/{url}", map[string]string{"url": "https://git.example.com/a.git"}},
		{"GET", "/api/v1/account/can-i/applications/sync/team-a/web", "/api/v1/account/can-i/{resource}/{action}/{object...}",
			map[string]string{"resource": "applications", "action": "sync", "object": "team-a/web"}},
		{"DELETE", "/api/v1/projects/p/roles/ci/token/0", "/api/v1/projects/{name}/roles/{role}/token/{iat}", map[string]string{"name": "p", "role": "ci", "iat": "0"}},
	} {
		r, params := match(tc.method, tc.path)
		if r == nil || r.pattern != tc.pattern {
			t.Errorf("%s %s: matched %v", tc.method, tc.path, r)
			continue
		}
		for k, v := range tc.params {
			if params[k] != v {
				t.Errorf("%s %s: %s = %q, want %q", tc.method, tc.path, k, params[k], v)
			}
		}
	}
	for _, miss := range [][2]string{{"GET", "/api/v1/applications/a/b/c"}, {"PUT", "/api/v1/applications"}, {"GET", "/api/v2/x"}} {
		if r, _ := match(miss[0], miss[1]); r != nil {
			t.Errorf("%s %s matched %s", miss[0], miss[1], r.pattern)
		}
	}
}
