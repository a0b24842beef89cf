package server

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// TestArgoCDRESTRoutes: every REST operation of Argo CD's API is routed,
// to its handler or to Argo CD's Unimplemented error; none is a 404.
func TestArgoCDRESTRoutes(t *testing.T) {
	s := &Server{mux: http.NewServeMux()}
	s.routes()
	if err := s.argoRoutes(); err != nil {
		t.Fatal(err)
	}
	schema, err := argoapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	methods, _ := schema.Methods()
	param := regexp.MustCompile(`\{[^}]+\}`)
	missing := 0
	for _, md := range methods {
		b, _ := argoapi.BindingOf(md)
		path := param.ReplaceAllString(b.Path, "x")
		r := httptest.NewRequest(b.Method, path, nil)
		if _, pattern := s.mux.Handler(r); pattern == "" {
			missing++
			t.Errorf("not routed: %s %s (%s)", b.Method, b.Path, md.FullName())
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d operations not routed", missing, len(methods))
	}
}
