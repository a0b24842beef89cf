package server

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// TestArgoCDRESTRoutes: every REST operation of Argo CD's API is routed,
// to its handler or to Argo CD's Unimplemented error; none is a 404.
func TestArgoCDRESTRoutes(t *testing.T) {
	t.Parallel()
	// With the hydrator on: off, its push credentials answer 501 too.
	s := &Server{mux: newRouteMux(), opts: Options{HydratorEnabled: true}}
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

// TestUnimplementedOnlyShrinks: exactly the operations Unimplemented
// lists answer 501; one that Capstan now serves must leave the list.
func TestUnimplementedOnlyShrinks(t *testing.T) {
	t.Parallel()
	s := &Server{mux: newRouteMux()}
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
	var unimplemented []string
	for _, md := range methods {
		b, _ := argoapi.BindingOf(md)
		r := httptest.NewRequest(b.Method, param.ReplaceAllString(b.Path, "x"), nil)
		h, _ := s.mux.Handler(r)
		w := httptest.NewRecorder()
		func() {
			defer func() { _ = recover() }() // a real handler needs a whole Server
			h.ServeHTTP(w, r)
		}()
		if w.Code == http.StatusNotImplemented {
			unimplemented = append(unimplemented, string(md.FullName()))
		}
	}
	for _, name := range unimplemented {
		if !slices.Contains(Unimplemented, name) {
			t.Errorf("%s answers Unimplemented", name)
		}
	}
	for _, name := range Unimplemented {
		if !slices.Contains(unimplemented, name) {
			t.Errorf("%s is served now: take it off Unimplemented", name)
		}
	}
}
