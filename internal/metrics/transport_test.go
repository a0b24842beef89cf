package metrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestDescribeRequest(t *testing.T) {
	for _, tc := range []struct {
		method, target            string
		verb, resource, namespace string
	}{
		{"GET", "/api/v1/namespaces/x/configmaps/y", "Get", "configmaps", "x"},
		{"GET", "/api/v1/namespaces/x/configmaps", "List", "configmaps", "x"},
		{"GET", "/api/v1/namespaces/x/configmaps?watch=true&resourceVersion=5", "Watch", "configmaps", "x"},
		{"GET", "/api/v1/namespaces/x/configmaps?watch=1", "Watch", "configmaps", "x"},
		{"GET", "/api/v1/watch/namespaces/x/configmaps", "Watch", "configmaps", "x"},
		{"GET", "/apis/apps/v1/deployments", "List", "deployments", ""},
		{"GET", "/api/v1/nodes/n1", "Get", "nodes", ""},
		{"GET", "/api/v1/namespaces", "List", "namespaces", ""},
		{"GET", "/api/v1/namespaces/x", "Get", "namespaces", ""},
		{"PUT", "/api/v1/namespaces/x/finalize", "Update", "namespaces", ""},
		{"PATCH", "/api/v1/namespaces/x/status", "Patch", "namespaces", ""},
		{"PATCH", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/a/status", "Patch", "applications", "argocd"},
		{"POST", "/api/v1/namespaces/x/configmaps", "Create", "configmaps", "x"},
		{"POST", "/api/v1/namespaces/x/pods/p/eviction", "Create", "pods", "x"},
		{"PUT", "/apis/apps/v1/namespaces/x/deployments/d/scale", "Update", "deployments", "x"},
		{"DELETE", "/apis/batch/v1/namespaces/x/jobs/j", "Delete", "jobs", "x"},
		{"DELETE", "/apis/batch/v1/namespaces/x/jobs", "Delete", "jobs", "x"},
		{"GET", "/k8s/clusters/c-1/api/v1/namespaces/x/secrets/s", "Get", "secrets", "x"}, // behind a proxy
		{"GET", "/apis/apps/v1", "Get", "", ""},                                           // discovery
		{"GET", "/apis", "Get", "", ""},
		{"GET", "/version", "Get", "", ""},
		{"HEAD", "/api/v1/namespaces/x/configmaps/y", "Unknown", "configmaps", "x"},
	} {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		verb, resource, namespace := describeRequest(req)
		if verb != tc.verb || resource != tc.resource || namespace != tc.namespace {
			t.Errorf("%s %s: verb %q, resource %q, namespace %q; want %q, %q, %q",
				tc.method, tc.target, verb, resource, namespace, tc.verb, tc.resource, tc.namespace)
		}
	}
}

type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// TestTransportError: a request that got no response counts with
// response_code "0", and the error reaches the caller unchanged.
func TestTransportError(t *testing.T) {
	m := New(nil, nil, Options{})
	rt := m.WrapTransport("https://c1")(failingTransport{})
	req := httptest.NewRequest("GET", "https://c1/api/v1/namespaces/x/pods/p", nil)
	if _, err := rt.RoundTrip(req); err == nil || err.Error() != "connection refused" {
		t.Fatalf("RoundTrip error = %v, want the transport's", err)
	}
	got := m.k8sRequests.value("", "", "", "https://c1", "0", "Get", "pods", "x", "false")
	if got != 1 {
		t.Errorf("argocd_app_k8s_request_total{response_code=\"0\"} = %v, want 1", got)
	}
	if w, ok := rt.(interface{ WrappedRoundTripper() http.RoundTripper }); !ok || w.WrappedRoundTripper() != (failingTransport{}) {
		t.Error("the wrapper does not expose the transport it wraps")
	}
}

// TestRequestDryRun: dry_run follows the sync in flight, not an old one.
func TestRequestDryRun(t *testing.T) {
	dry := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{DryRun: true}}
	for _, tc := range []struct {
		name string
		app  v1alpha1.Application
		want bool
	}{
		{"requested", v1alpha1.Application{Operation: &dry}, true},
		{"running", v1alpha1.Application{Status: v1alpha1.ApplicationStatus{OperationState: &v1alpha1.OperationState{Operation: dry, Phase: v1alpha1.OperationRunning}}}, true},
		{"finished", v1alpha1.Application{Status: v1alpha1.ApplicationStatus{OperationState: &v1alpha1.OperationState{Operation: dry, Phase: v1alpha1.OperationSucceeded}}}, false},
		{"none", v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, false},
	} {
		if got := syncInFlightDryRun(&tc.app); got != tc.want {
			t.Errorf("%s: dry run %v, want %v", tc.name, got, tc.want)
		}
	}
}
