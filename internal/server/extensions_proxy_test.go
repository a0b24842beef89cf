package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/metrics"
	"github.com/capstan-cd/capstan/internal/settings"
	"github.com/capstan-cd/capstan/internal/testing/eventually"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
	"github.com/capstan-cd/capstan/internal/testing/testobj"
)

// seenRequest is what the extension's backend received.
type seenRequest struct {
	Path    string
	Headers map[string]string
}

// TestProxyExtensions: with server.enable.proxy.extension, a request to
// /extensions/<name>/<path> reaches the backend argocd-cm names, without
// the caller's credentials and with Argo CD's headers, once the caller
// may get the Application and invoke the extension; every other caller,
// a project that does not match, or a missing header is refused as Argo
// CD refuses it.
func TestProxyExtensions(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	ctx := context.Background()
	if err := kube.InstallCRDs(ctx, kubeCluster.Config); err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := seenRequest{Path: r.URL.Path, Headers: map[string]string{}}
		for k := range r.Header {
			seen.Headers[k] = r.Header.Get(k)
		}
		_ = json.NewEncoder(w).Encode(seen)
	}))
	defer backend.Close()
	counts := metrics.NewServer("v0.0.0-test")
	f := startWith(t, Options{Insecure: true, EnableProxyExtension: true, Metrics: counts})
	f.setSecret("metrics.token", "backend-secret")
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"accounts.viewer": "apiKey", "accounts.invoker": "apiKey",
		"extension.config.metrics": "services:\n- url: " + backend.URL + "\n  headers:\n  - name: X-Backend-Token\n    value: $metrics.token\n",
	}}); err != nil {
		t.Fatal(err)
	}
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-rbac-cm", Namespace: f.ns}, Data: map[string]string{
		"policy.csv": "p, viewer, applications, get, */*, allow\n" +
			"p, invoker, applications, get, */*, allow\np, invoker, extensions, invoke, *, allow\n",
	}}); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns}, Spec: v1alpha1.ApplicationSpec{Project: "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/web.git", Path: "."},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
	if err := f.c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	admin, viewer, invoker := f.adminToken(), f.apiKey("viewer"), f.apiKey("invoker")
	call := func(path, token, appHeader, projHeader string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", f.base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
			req.AddCookie(&http.Cookie{Name: tokenCookie, Value: token})
		}
		if appHeader != "" {
			req.Header.Set("Argocd-Application-Name", appHeader)
		}
		if projHeader != "" {
			req.Header.Set("Argocd-Project-Name", projHeader)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	appHeader := f.ns + ":web"

	code, body := call("/extensions/metrics/api/v1/query?q=1", invoker, appHeader, "default")
	var seen seenRequest
	if code != 200 || json.Unmarshal([]byte(body), &seen) != nil {
		t.Fatalf("the invoker's call: %d %s", code, body)
	}
	h := seen.Headers
	if seen.Path != "/api/v1/query" || h["Argocd-Namespace"] != f.ns || h["Argocd-Target-Cluster-Url"] != "https://kubernetes.default.svc" ||
		h["Argocd-Username"] != "invoker" || h["X-Backend-Token"] != "backend-secret" ||
		h["X-Forwarded-For"] != "127.0.0.1" || h["X-Forwarded-Proto"] != "http" || h["X-Forwarded-Host"] == "" {
		t.Errorf("the backend saw %+v", seen)
	}
	if h["Authorization"] != "" || h["Cookie"] != "" {
		t.Errorf("the caller's credentials reached the backend: %+v", h)
	}
	// As in Argo CD, role:admin holds no extensions policy of its own.
	if code, _ := call("/extensions/metrics/x", admin, appHeader, "default"); code != 401 {
		t.Errorf("admin without an extensions policy: %d, want 401", code)
	}
	for _, tt := range []struct {
		name, token, app, proj string
		want                   int
	}{
		{"may get the app, not invoke the extension", viewer, appHeader, "default", 401},
		{"a project that is not the app's", invoker, appHeader, "other", 401},
		{"an app that does not exist", invoker, f.ns + ":nope", "default", 401},
		{"an app namespace the server does not serve", invoker, "elsewhere:web", "default", 401},
		{"no application header", invoker, "", "default", 400},
		{"an application header without a namespace", invoker, "web", "default", 400},
		{"no project header", invoker, appHeader, "", 400},
		{"no session", "", appHeader, "default", 401},
	} {
		if code, body := call("/extensions/metrics/x", tt.token, tt.app, tt.proj); code != tt.want || strings.Contains(body, "backend-secret") {
			t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.want)
		}
	}
	if code, _ := call("/extensions/unknown/x", invoker, appHeader, "default"); code != 404 {
		t.Errorf("an extension no configuration names: %d, want 404", code)
	}
	// Only the forwarded request is counted, with the backend's status.
	page := scrape(t, counts.Handler())
	for _, want := range []string{`argocd_proxy_extension_request_total{extension="metrics",status="200"} 1`,
		`argocd_proxy_extension_request_duration_seconds_count{extension="metrics"} 1`} {
		if !strings.Contains(page, want+"\n") {
			t.Errorf("the metrics lack %s:\n%s", want, grepLines(page, "argocd_proxy"))
		}
	}

	// extension.config, Argo CD's list of extensions under one key, is
	// served beside the per-extension keys.
	if err := testobj.Put(ctx, f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns}, Data: map[string]string{
		"accounts.viewer": "apiKey", "accounts.invoker": "apiKey",
		"extension.config.metrics": "services:\n- url: " + backend.URL + "\n",
		"extension.config":         "extensions:\n- name: logs\n  backend:\n    services:\n    - url: " + backend.URL + "/logs\n",
	}}); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the extension.config extension served", func() bool {
		code, body := call("/extensions/logs/tail", invoker, appHeader, "default")
		// As in Argo CD, the service URL's path is not prefixed.
		return code == 200 && strings.Contains(body, `"Path":"/tail"`)
	})
}

// TestProxyExtensionsOff: without server.enable.proxy.extension nothing is
// forwarded, whatever argocd-cm says.
func TestProxyExtensionsOff(t *testing.T) {
	t.Parallel()
	localcluster.Need(t)
	f := start(t, true)
	if err := testobj.Put(context.Background(), f.c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: settings.CMName, Namespace: f.ns},
		Data: map[string]string{"extension.config.metrics": "services:\n- url: http://127.0.0.1:1\n"}}); err != nil {
		t.Fatal(err)
	}
	_, pattern := f.srv.mux.Handler(httptest.NewRequest("GET", "/extensions/metrics/x", nil))
	if strings.HasPrefix(pattern, "/extensions") {
		t.Errorf("/extensions/ is routed (%s) while proxy extensions are off", pattern)
	}
}
