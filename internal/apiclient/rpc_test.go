package apiclient

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestMatchFindsTheRouteAndItsParameters(t *testing.T) {
	for _, tc := range []struct {
		method, path, method2 string
		params                map[string]string
	}{
		{"GET", "/api/v1/applications/guestbook", "application.ApplicationService.Get", map[string]string{"name": "guestbook"}},
		{"POST", "/api/v1/applications/guestbook/sync", "application.ApplicationService.Sync", map[string]string{"name": "guestbook"}},
		{"GET", "/api/v1/account/can-i/applications/sync/team-a/web", "account.AccountService.CanI",
			map[string]string{"resource": "applications", "action": "sync", "subresource": "team-a/web"}},
		{"DELETE", "/api/v1/repositories/" + url.PathEscape("https://git.example.com/a.git"), "repository.RepositoryService.Delete",
			map[string]string{"repo": "https://git.example.com/a.git"}},
		{"POST", "/api/v1/repositories/" + url.PathEscape("https://git.example.com/a.git") + "/appdetails", "repository.RepositoryService.GetAppDetails",
			map[string]string{"source.repoURL": "https://git.example.com/a.git"}},
		// A POST a GET binding carries, its body read as the query.
		{"POST", "/api/v1/applications/web/server-side-diff", "application.ApplicationService.ServerSideDiff", map[string]string{"appName": "web"}},
	} {
		m, params, err := match(tc.method, tc.path, false)
		if err != nil || string(m.md.FullName()) != tc.method2 {
			t.Errorf("%s %s: %v %v", tc.method, tc.path, m, err)
			continue
		}
		for k, v := range tc.params {
			if params[k] != v {
				t.Errorf("%s %s: %s = %q, want %q", tc.method, tc.path, k, params[k], v)
			}
		}
	}
	if m, _, err := match("GET", "/api/v1/stream/applications", true); err != nil || m.md.Name() != "Watch" {
		t.Errorf("the application stream: %v %v", m, err)
	}
	for _, miss := range [][2]string{{"GET", "/api/v1/applications/a/b/c"}, {"PUT", "/api/v2/x"}} {
		if m, _, err := match(miss[0], miss[1], false); err == nil {
			t.Errorf("%s %s matched %s", miss[0], miss[1], m.md.FullName())
		}
	}
}

// TestRequestFromREST: path, query (nested by dotted JSON names) and body
// fill a method's request.
func TestRequestFromREST(t *testing.T) {
	m, params, err := match("PUT", "/api/v1/clusters/"+url.PathEscape("https://k8s.example.com"), false)
	if err != nil {
		t.Fatal(err)
	}
	req, err := m.request(params, url.Values{"updatedFields": {"name", "labels"}, "id.type": {"server"}}, []byte(`{"name":"prod","labels":{"env":"prod"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(req)
	for _, want := range []string{`updatedFields:"name"`, `updatedFields:"labels"`, `name:"prod"`, `type:"server"`, `value:"https://k8s.example.com"`} {
		if !strings.Contains(got, want) {
			t.Errorf("request %s lacks %s", got, want)
		}
	}
}
