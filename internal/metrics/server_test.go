package metrics_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/capstan-cd/capstan/internal/metrics"
)

// The API server counts local logins and proxy extension requests; its
// handler serves them beside the process's default registry.
func ExampleServer() {
	m := metrics.NewServer("v1.2.3")
	m.Login(true)
	m.Login(false)
	m.Login(false)
	m.ExtensionRequest("metrics", 200, 30*time.Millisecond)
	m.ExtensionRequest("metrics", 502, 2*time.Second)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "argocd_login") || strings.HasPrefix(line, "argocd_info") ||
			strings.HasPrefix(line, "argocd_proxy_extension_request_total") ||
			strings.HasPrefix(line, "argocd_proxy_extension_request_duration_seconds_count") {
			fmt.Println(line)
		}
	}
	var none *metrics.Server // counts nothing, and does not fail
	none.Login(true)
	// Output:
	// argocd_info{version="v1.2.3"} 1
	// argocd_login_request_total{status="failure"} 2
	// argocd_login_request_total{status="success"} 1
	// argocd_proxy_extension_request_duration_seconds_count{extension="metrics"} 2
	// argocd_proxy_extension_request_total{extension="metrics",status="200"} 1
	// argocd_proxy_extension_request_total{extension="metrics",status="502"} 1
}

// The repo server counts its requests to Git remotes and OCI registries
// by kind, with their duration, and the failed ones apart.
func ExampleRepoServer() {
	m := metrics.NewRepoServer()
	m.GitRequest("https://git.example.com/org/app.git", "ls-remote", 120*time.Millisecond, false)
	m.GitRequest("https://git.example.com/org/app.git", "fetch", 2*time.Second, false)
	m.GitRequest("https://git.example.com/org/app.git", "fetch", 30*time.Second, true)
	m.OCIRequest("oci://registry.example.com/org/manifests", "resolve-revision", "1.*", time.Second, true)
	m.OCIRequest("oci://registry.example.com/org/manifests", "get-tags", "", time.Second, true)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "argocd_git_request_total") || strings.HasPrefix(line, "argocd_git_fetch_fail_total") ||
			strings.HasPrefix(line, "argocd_git_request_duration_seconds_count") || strings.HasPrefix(line, "argocd_oci_request_total") ||
			strings.HasPrefix(line, "argocd_oci_resolve_revision_fail_total") || strings.HasPrefix(line, "argocd_oci_get_tags_fail_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// argocd_git_fetch_fail_total{repo="https://git.example.com/org/app.git",revision=""} 1
	// argocd_git_request_duration_seconds_count{repo="https://git.example.com/org/app.git",request_type="fetch"} 2
	// argocd_git_request_duration_seconds_count{repo="https://git.example.com/org/app.git",request_type="ls-remote"} 1
	// argocd_git_request_total{repo="https://git.example.com/org/app.git",request_type="fetch"} 2
	// argocd_git_request_total{repo="https://git.example.com/org/app.git",request_type="ls-remote"} 1
	// argocd_oci_get_tags_fail_total{repo="oci://registry.example.com/org/manifests"} 1
	// argocd_oci_request_total{repo="oci://registry.example.com/org/manifests",request_type="get-tags"} 1
	// argocd_oci_request_total{repo="oci://registry.example.com/org/manifests",request_type="resolve-revision"} 1
	// argocd_oci_resolve_revision_fail_total{repo="oci://registry.example.com/org/manifests",revision="1.*"} 1
}
