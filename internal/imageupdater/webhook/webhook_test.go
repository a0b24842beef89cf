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
		name string
		kind Kind
		body string
		want []Push
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
		{"azure", "", `{"id":"1","action":"push","target":{"repository":"team/app","tag":"v3","digest":"sha256:ab"},"request":{"host":"team.azurecr.io"}}`,
			[]Push{{"team.azurecr.io/team/app", "v3"}}},
		{"azure untagged", "acr", `{"action":"push","target":{"repository":"team/app"},"request":{"host":"team.azurecr.io"}}`, nil},
		{"azure ping", "acr", `{"action":"ping","target":{"repository":"team/app","tag":"1"},"request":{"host":"team.azurecr.io"}}`, nil},
		{"alibaba cloud", "", `{"push_data":{"digest":"sha256:ab","tag":"1.4.0"},"repository":{"name":"app","namespace":"team","region":"cn-hangzhou","repo_full_name":"team/app"}}`,
			[]Push{{"registry.cn-hangzhou.aliyuncs.com/team/app", "1.4.0"}}},
		{"ecr through eventbridge", "", `{"specversion":"1.0","id":"x","type":"com.amazon.ecr.image.push","source":"arn:aws:ecr:eu-west-1:123456789012:repository/team/app",
			"data":{"repositoryName":"team/app","imageTag":"2.0.1","imageDigest":"sha256:ab"}}`,
			[]Push{{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app", "2.0.1"}}},
		{"a generic image cloudevent", "cloudevents", `{"specversion":"1.0","type":"io.example.image.pushed","source":"https://reg.example.com:5000/hooks","subject":"team/app:7"}`,
			[]Push{{"reg.example.com:5000/team/app", "7"}}},
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
	for _, bad := range []struct {
		kind Kind
		body string
	}{{"", "nope"}, {"", `{"hello":1}`}, {"docker.io", `{}`}, {"gitlab", `{}`},
		{"aliyun-acr", `{"push_data":{"tag":"1"},"repository":{"repo_full_name":"team/app"}}`}, // no region, no registry_url
		{"cloudevents", `{"specversion":"1.0","type":"io.example.build.finished","subject":"team/app:7"}`},
		{"cloudevents", `{"specversion":"1.0","type":"com.amazon.ecr.image.push","source":"nowhere","data":{"repositoryName":"a","imageTag":"1"}}`}} {
		if _, err := Parse(bad.kind, []byte(bad.body)); err == nil {
			t.Errorf("%s %s: no error", bad.kind, bad.body)
		}
	}
}

func TestHandlerChecksTheSecret(t *testing.T) {
	var got []Push
	h := &Handler{Secret: "s3cret", OnPush: func(p []Push) { got = append(got, p...) }}
	body := `{"push_data":{"tag":"1"},"repository":{"repo_name":"org/app"}}`
	send := func(target string, header map[string]string) int { return post(h, target, body, header) }
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
		if code := send(tc.target, tc.header); code != tc.want {
			t.Errorf("%s %v: HTTP %d, want %d", tc.target, tc.header, code, tc.want)
		}
	}
	if len(got) != 3 || got[0].Image != "docker.io/org/app" {
		t.Errorf("pushes %v", got)
	}
}

// TestEachTypeHasItsOwnSecret: a type's own secret replaces the shared
// one for that type only, and with RequireSecret a type without any is
// refused, as Image Updater's webhook.require-secret has it.
func TestEachTypeHasItsOwnSecret(t *testing.T) {
	pushed := 0
	h := &Handler{Secrets: map[Kind]string{Quay: "quay-s3cret", CloudEvents: "ce-s3cret"}, OnPush: func(p []Push) { pushed += len(p) }}
	quay := `{"repository":"org/app","docker_url":"quay.io/org/app","updated_tags":["1"]}`
	docker := `{"push_data":{"tag":"1"},"repository":{"repo_name":"org/app"}}`
	ecr := `{"specversion":"1.0","type":"com.amazon.ecr.image.push","source":"arn:aws:ecr:eu-west-1:1:repository/app","data":{"repositoryName":"app","imageTag":"1"}}`
	send := func(target, body string, header map[string]string) int { return post(h, target, body, header) }
	for _, tc := range []struct {
		name, target, body string
		header             map[string]string
		want               int
	}{
		{"quay without its secret", "/webhook", quay, nil, http.StatusUnauthorized},
		{"quay with another type's secret", "/webhook?secret=ce-s3cret", quay, nil, http.StatusUnauthorized},
		{"quay with its secret", "/webhook?secret=quay-s3cret", quay, nil, http.StatusAccepted},
		{"a cloudevent with its secret in a header", "/webhook", ecr, map[string]string{"X-Webhook-Secret": "ce-s3cret"}, http.StatusAccepted},
		{"docker hub, which has none", "/webhook", docker, nil, http.StatusAccepted},
	} {
		if code := send(tc.target, tc.body, tc.header); code != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, code, tc.want)
		}
	}
	if pushed != 3 {
		t.Errorf("%d pushes, want 3", pushed)
	}
	h.RequireSecret = true
	if code := send("/webhook", docker, nil); code != http.StatusUnauthorized {
		t.Errorf("a type without a secret when one is required: HTTP %d, want 401", code)
	}
	if code := send("/webhook?secret=quay-s3cret", quay, nil); code != http.StatusAccepted {
		t.Errorf("a type with its secret when one is required: HTTP %d, want 202", code)
	}
}

// post sends a webhook to h and returns the status it answers.
func post(h http.Handler, target, body string, header map[string]string) int {
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestTypeDoesNotChooseTheSecret is a finding of the second tenant
// review: the secret a request must carry followed the caller's ?type,
// so a Docker Hub push (whose format has a secret) sent as an open
// format's got in without it. A payload that looks like a guarded format
// needs that format's secret, whatever ?type says.
func TestTypeDoesNotChooseTheSecret(t *testing.T) {
	pushed := 0
	h := &Handler{Secrets: map[Kind]string{DockerHub: "docker-s3cret"}, OnPush: func(p []Push) { pushed += len(p) }}
	docker := `{"push_data":{"tag":"1"},"repository":{"repo_name":"org/app","name":"app","namespace":"org","region":"cn-hangzhou"}}`
	for _, tc := range []struct {
		target string
		want   int
	}{
		{"/webhook?type=aliyun-acr", http.StatusUnauthorized},
		{"/webhook?type=aliyun-acr&registry_url=reg.example.com", http.StatusUnauthorized},
		{"/webhook?type=aliyun-acr&secret=docker-s3cret", http.StatusAccepted},
		{"/webhook?secret=docker-s3cret", http.StatusAccepted},
	} {
		if code := post(h, tc.target, docker, nil); code != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.target, code, tc.want)
		}
	}
	if pushed != 2 {
		t.Errorf("%d pushes, want 2", pushed)
	}
}
