package helm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// TestRemoteValueFiles: value files given as URLs are fetched over the
// schemes helm.valuesFileSchemes allows (Argo CD's default: https and
// http), bounded in size; other schemes are refused with Argo CD's message.
func TestRemoteValueFiles(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/values.yaml":
			_, _ = w.Write([]byte("replicaCount: 5\n"))
		case "/huge.yaml":
			_, _ = w.Write([]byte("x: " + strings.Repeat("a", maxRemoteValuesBytes) + "\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	render := func(schemes []string, files ...string) ([]*unstructured.Unstructured, error) {
		return Render(context.Background(), Input{Root: charts, Path: "conditionals", AppName: "demo", ValuesFileSchemes: schemes,
			Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: files}})
	}
	objs, err := render(nil, srv.URL+"/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if r, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); r != 5 {
				t.Errorf("replicas = %d, want 5 from the remote value file", r)
			}
		}
	}
	for _, tc := range []struct {
		schemes []string
		file    string
		want    string
	}{
		{[]string{"https"}, srv.URL + "/values.yaml", "the URL scheme 'http' is not allowed"},
		{[]string{}, srv.URL + "/values.yaml", "the URL scheme 'http' is not allowed"},
		{nil, srv.URL + "/missing.yaml", "404"},
		{nil, srv.URL + "/huge.yaml", "larger than"},
		{[]string{"secrets"}, "secrets://values.yaml", "fetches value files over http and https only"},
		{nil, "file:///etc/passwd", "must be http or https"},
	} {
		if _, err := render(tc.schemes, tc.file); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %s: %v; want %q", tc.schemes, tc.file, err, tc.want)
		}
	}
}
