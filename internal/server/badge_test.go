package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// TestBadge: the status badge needs no login, reads Unknown until
// statusbadge.enabled, then shows an app's health and sync (and
// revision), a project's apps together, and Not Found for others.
func TestBadge(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	f := start(t, false)
	get := func(query string) (int, string, http.Header) {
		t.Helper()
		resp := f.send(ctx, "GET", "/api/badge?"+query, "", "")
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), resp.Header
	}
	for _, name := range []string{"web", "db"} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/x.git"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name}}}
		if err := f.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		app.Status.Health.Status, app.Status.Sync.Status = v1alpha1.HealthStatusHealthy, v1alpha1.SyncStatusCodeSynced
		app.Status.Sync.Revision = "0123456789abcdef0123456789abcdef01234567"
		if name == "db" {
			app.Status.Health.Status, app.Status.Sync.Status = v1alpha1.HealthStatusDegraded, v1alpha1.SyncStatusCodeOutOfSync
		}
		if err := f.c.Update(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	code, svg, h := get("name=web")
	if code != 200 || h.Get("Content-Type") != "image/svg+xml" || h.Get("Cache-Control") != "private, no-store" || !strings.Contains(svg, ">Unknown<") {
		t.Errorf("badge while disabled: %d %v %s", code, h, svg)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"statusbadge.enabled": "true"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"name=web", []string{">Healthy<", ">Synced<", `fill="#0b612a"`, `width="131"`}},
		{"name=web&revision=true", []string{"(0123456)", `width="192"`}},
		{"name=web&revision=true&keepFullRevision=true", []string{"(0123456789abcdef0123456789abcdef01234567)", `width="400"`}},
		{"name=web&showAppName=true", []string{">web<", `height="40"`}},
		{"name=db", []string{">Degraded<", ">OutOfSync<", `fill="#a72e26"`, `fill="#bd7300"`}},
		{"project=default", []string{">Degraded<", ">OutOfSync<"}},
		{"name=nothere", []string{">Not Found<"}},
	} {
		if code, svg, _ := get(tc.query); code != 200 || !containsAll(svg, tc.want) {
			t.Errorf("%s: %d %s; want %v", tc.query, code, svg, tc.want)
		}
	}
	if code, body, _ := get("name=" + strings.Repeat("A", 300)); code != 400 || body != "" {
		t.Errorf("a name no app can have: %d %q", code, body)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestSwaggerServed: /swagger.json and /swagger-ui need no login.
func TestSwaggerServed(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, false)
	var doc struct {
		Swagger string
		Paths   map[string]any
	}
	if code := f.call("GET", "/swagger.json", "", "", &doc); code != 200 || doc.Swagger != "2.0" || doc.Paths["/api/v1/applications"] == nil {
		t.Errorf("swagger.json: %d %s, %d paths", code, doc.Swagger, len(doc.Paths))
	}
	resp := f.send(context.Background(), "GET", "/swagger-ui", "", "")
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(page), "ApplicationService_Sync") {
		t.Errorf("swagger-ui: %d", resp.StatusCode)
	}
}

// TestSwaggerUIDisabled: server.disable.swagger.ui leaves both unserved,
// as in Argo CD.
func TestSwaggerUIDisabled(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := startWith(t, Options{DisableSwaggerUI: true})
	for _, path := range []string{"/swagger.json", "/swagger-ui"} {
		resp := f.send(context.Background(), "GET", path, "", "")
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.Contains(string(page), "ApplicationService_Sync") {
			t.Errorf("%s with the Swagger UI off: %d", path, resp.StatusCode)
		}
	}
}
