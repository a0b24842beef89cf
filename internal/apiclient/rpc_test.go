package apiclient

import (
	"net/url"
	"testing"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
)

func TestMatchFindsTheRouteAndItsParameters(t *testing.T) {
	for _, tc := range []struct {
		method, path, pattern string
		params                map[string]string
	}{
		{"GET", "/api/v1/applications/guestbook", "/api/v1/applications/{name}", map[string]string{"name": "guestbook"}},
		{"POST", "/api/v1/applications/guestbook/sync", "/api/v1/applications/{name}/sync", map[string]string{"name": "guestbook"}},
		{"GET", "/api/v1/account/can-i/applications/sync/team-a/web", "/api/v1/account/can-i/{resource}/{action}/{subresource...}",
			map[string]string{"resource": "applications", "action": "sync", "subresource": "team-a/web"}},
		{"DELETE", "/api/v1/projects/p/roles/ci/token/0", "/api/v1/projects/{project}/roles/{role}/token/{iat}", map[string]string{"project": "p", "role": "ci", "iat": "0"}},
		{"DELETE", "/api/v1/repositories/" + url.PathEscape("https://git.example.com/a.git"), "/api/v1/repositories/{repo}", map[string]string{"repo": "https://git.example.com/a.git"}},
	} {
		r, params := match(tc.method, tc.path)
		if r == nil || rule(r.descriptor()).GetPath() != tc.pattern {
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
			t.Errorf("%s %s matched %s", miss[0], miss[1], r.descriptor().FullName())
		}
	}
}

// TestEveryMethodNamesARESTCall: the table covers every unary method of
// the API, and every method has an http option.
func TestEveryMethodNamesARESTCall(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range methods {
		seen[string(m.descriptor().FullName())] = true
	}
	services := capstanv1.File_capstan_v1_api_proto.Services()
	for i := 0; i < services.Len(); i++ {
		ms := services.Get(i).Methods()
		for j := 0; j < ms.Len(); j++ {
			md := ms.Get(j)
			if r := rule(md); r == nil || r.GetMethod() == "" || r.GetPath() == "" {
				t.Errorf("%s has no http option", md.FullName())
			}
			if !md.IsStreamingServer() && !seen[string(md.FullName())] {
				t.Errorf("%s is missing from the client's methods", md.FullName())
			}
		}
	}
}
