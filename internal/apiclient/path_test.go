package apiclient_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/capstan-cd/capstan/internal/apiclient"
)

// A name is one path segment whatever it holds, and queries add up.
func ExamplePathOf() {
	p := apiclient.PathOf("/api/v1/applications/{name}/resource", "web/../../x?y")
	fmt.Println(p)
	fmt.Println(p.With(url.Values{"appNamespace": {"team a"}}).With(url.Values{"kind": {"Pod"}}))
	fmt.Println(apiclient.PathOf("/api/v1/clusters/{server}", "https://10.0.0.1:6443").With(nil))
	fmt.Println(apiclient.PathOf("/api/v1/account/can-i/{resource}/{action}/{object...}", "applications", "get", "team a/*?"))
	// Output:
	// /api/v1/applications/web%2F..%2F..%2Fx%3Fy/resource
	// /api/v1/applications/web%2F..%2F..%2Fx%3Fy/resource?appNamespace=team+a&kind=Pod
	// /api/v1/clusters/https:%2F%2F10.0.0.1:6443
	// /api/v1/account/can-i/applications/get/team%20a/%2A%3F
}

func TestPathOfCountsPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		values  []string
	}{
		{"/api/v1/projects/{name}", nil},
		{"/api/v1/projects", []string{"x"}},
		{"/api/v1/projects/{name}/roles/{role}", []string{"x"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PathOf(%q, %q) did not panic", tc.pattern, tc.values)
				}
			}()
			apiclient.PathOf(tc.pattern, tc.values...)
		}()
	}
}
