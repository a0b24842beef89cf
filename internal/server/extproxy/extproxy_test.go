package extproxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/server/extproxy"
	"github.com/capstan-cd/capstan/internal/settings"
)

// backend answers with its name and the path and headers it received.
func backend(name string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s cluster=%s user=%s auth=%q token=%s", name, r.URL.Path,
			r.Header.Get(extproxy.HeaderTargetClusterName)+r.Header.Get(extproxy.HeaderTargetClusterURL),
			r.Header.Get(extproxy.HeaderUsername), r.Header.Get("Authorization"), r.Header.Get("X-Token"))
	}))
}

func app(dest v1alpha1.ApplicationDestination) *v1alpha1.Application {
	return &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: dest}}
}

func forward(t *testing.T, reg *extproxy.Registry, ext, path string, a *v1alpha1.Application) (string, error) {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("Authorization", "Bearer caller-token")
	w := httptest.NewRecorder()
	if err := reg.Forward(w, r, extproxy.Request{Extension: ext, Namespace: "argocd", App: a, Username: "alice"}); err != nil {
		return "", err
	}
	body, _ := io.ReadAll(w.Result().Body)
	return string(body), nil
}

// TestServiceByCluster: an extension with several services sends each
// Application's requests to the service of its destination cluster, by
// name or by server URL.
func TestServiceByCluster(t *testing.T) {
	local, remote := backend("local"), backend("remote")
	defer local.Close()
	defer remote.Close()
	reg, err := extproxy.New([]settings.ProxyExtension{{Name: "logs", Backend: settings.ProxyBackend{Services: []settings.ProxyService{
		{URL: local.URL, Cluster: &settings.ProxyCluster{Name: "in-cluster"}, Headers: []settings.ProxyHeader{{Name: "X-Token", Value: "t1"}}},
		{URL: remote.URL, Cluster: &settings.ProxyCluster{Server: "https://remote.example.com"}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dest v1alpha1.ApplicationDestination
		want string
	}{
		{v1alpha1.ApplicationDestination{Name: "in-cluster"}, `local /q cluster=in-cluster user=alice auth="" token=t1`},
		{v1alpha1.ApplicationDestination{Server: "https://remote.example.com"}, `remote /q cluster=https://remote.example.com user=alice auth="" token=`},
	} {
		if got, err := forward(t, reg, "logs", "/extensions/logs/q", app(tt.dest)); err != nil || got != tt.want {
			t.Errorf("%+v: %q, %v; want %q", tt.dest, got, err, tt.want)
		}
	}
	if _, err := forward(t, reg, "logs", "/extensions/logs/q", app(v1alpha1.ApplicationDestination{Name: "elsewhere"})); err != extproxy.ErrNoBackend {
		t.Errorf("a cluster no service names: %v, want ErrNoBackend", err)
	}
	if _, err := forward(t, reg, "nope", "/extensions/nope/q", app(v1alpha1.ApplicationDestination{Name: "in-cluster"})); err != extproxy.ErrUnknown {
		t.Errorf("an unknown extension: %v, want ErrUnknown", err)
	}
	if _, err := extproxy.New([]settings.ProxyExtension{{Name: "x", Backend: settings.ProxyBackend{Services: []settings.ProxyService{{URL: "file:///etc/passwd"}}}}}); err == nil {
		t.Error("a service URL that is not http or https was accepted")
	}
}

func ExampleRegistry_Forward() {
	metrics := backend("metrics")
	defer metrics.Close()
	reg, err := extproxy.New([]settings.ProxyExtension{{Name: "metrics", Backend: settings.ProxyBackend{
		Services: []settings.ProxyService{{URL: metrics.URL}}}}})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/extensions/metrics/api/v1/query", nil)
	r.Header.Set("Authorization", "Bearer the-callers-token") // never forwarded
	w := httptest.NewRecorder()
	a := app(v1alpha1.ApplicationDestination{Name: "in-cluster"})
	if err := reg.Forward(w, r, extproxy.Request{Extension: "metrics", Namespace: "argocd", App: a, Username: "alice"}); err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(w.Result().Body)
	fmt.Println(string(body))
	// Output: metrics /api/v1/query cluster=in-cluster user=alice auth="" token=
}
