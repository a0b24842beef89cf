// Package trap starts an HTTP server standing for an address a tenant
// chose (a registry, a Git repository, an SCM provider's API): it records
// every request it hears and answers each with a Basic authentication
// challenge, so a client holding credentials sends them. A test of a
// refusal expects it to have heard nothing.
//
//	t := trap.Start(t)
//	// ... point a tenant's field at t.URL, run the component ...
//	if heard := t.Heard(); len(heard) > 0 { ... }
package trap

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is what the trap heard of one request.
type Request struct {
	Method, Path string
	// Credentials is true when the request carried an Authorization
	// header (its value is not kept).
	Credentials bool
}

// Server is a running trap.
type Server struct {
	// URL is its address (http://127.0.0.1:port); Host its host:port.
	URL, Host string

	mu    sync.Mutex
	heard []Request
}

// Start starts a trap that stops when the test ends.
func Start(t testing.TB) *Server {
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.heard = append(s.heard, Request{Method: r.Method, Path: r.URL.Path, Credentials: r.Header.Get("Authorization") != ""})
		s.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="trap"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	s.URL, s.Host = srv.URL, strings.TrimPrefix(srv.URL, "http://")
	return s
}

// Heard returns the requests heard so far.
func (s *Server) Heard() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.heard...)
}
