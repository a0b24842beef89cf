package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, kind, body string
		want             []Push
	}{
		{"docker hub", "", `{"push_data":{"tag":"1.2.0"},"repository":{"repo_name":"nginx","name":"nginx"}}`,
			[]Push{{"docker.io/library/nginx", "1.2.0"}}},
		{"github packages", "", `{"action":"published","registry_package":{"package_version":{"package_url":"ghcr.io/org/app:1.2.0"}}}`,
			[]Push{{"ghcr.io/org/app", "1.2.0"}}},
		{"harbor", "harbor", `{"type":"PUSH_ARTIFACT","event_data":{"resources":[{"tag":"v2","resource_url":"harbor.example.com:8443/proj/app:v2"}]}}`,
			[]Push{{"harbor.example.com:8443/proj/app", "v2"}}},
		{"harbor delete", "", `{"type":"DELETE_ARTIFACT","event_data":{"resources":[{"resource_url":"h/p/a:1"}]}}`, nil},
		{"quay", "", `{"repository":"org/app","docker_url":"quay.io/org/app","updated_tags":["1.0","latest"]}`,
			[]Push{{"quay.io/org/app", "1.0"}, {"quay.io/org/app", "latest"}}},
		{"distribution", "", `{"events":[{"action":"pull","target":{"repository":"team/app","tag":"1"},"request":{"host":"reg:5000"}},
			{"action":"push","target":{"repository":"team/app"},"request":{"host":"reg:5000"}},
			{"action":"push","target":{"repository":"team/app","tag":"1.1.0"},"request":{"host":"reg:5000"}}]}`,
			[]Push{{"reg:5000/team/app", "1.1.0"}}},
	} {
		got, err := Parse(tc.kind, []byte(tc.body))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []struct{ kind, body string }{{"", "nope"}, {"", `{"hello":1}`}, {"docker.io", `{}`}, {"gitlab", `{}`}} {
		if _, err := Parse(bad.kind, []byte(bad.body)); err == nil {
			t.Errorf("%s %s: no error", bad.kind, bad.body)
		}
	}
}

func TestHandlerChecksTheSecret(t *testing.T) {
	var got []Push
	h := &Handler{Secret: "s3cret", OnPush: func(p []Push) { got = append(got, p...) }}
	body := `{"push_data":{"tag":"1"},"repository":{"repo_name":"org/app"}}`
	post := func(target string, header map[string]string) int {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(body))
	for _, tc := range []struct {
		target string
		header map[string]string
		want   int
	}{
		{"/webhook", nil, http.StatusUnauthorized},
		{"/webhook?secret=wrong", nil, http.StatusUnauthorized},
		{"/webhook?secret=s3cret", nil, http.StatusAccepted},
		{"/webhook", map[string]string{"Authorization": "s3cret"}, http.StatusAccepted},
		{"/webhook", map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}, http.StatusAccepted},
		{"/webhook?type=quay.io&secret=s3cret", nil, http.StatusBadRequest},
	} {
		if code := post(tc.target, tc.header); code != tc.want {
			t.Errorf("%s %v: HTTP %d, want %d", tc.target, tc.header, code, tc.want)
		}
	}
	if len(got) != 3 || got[0].Image != "docker.io/org/app" {
		t.Errorf("pushes %v", got)
	}
}
