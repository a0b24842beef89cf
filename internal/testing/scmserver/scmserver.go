// Package scmserver runs local servers that speak the part of the
// documented APIs of GitHub, GitLab, Bitbucket Server and Cloud, Azure
// DevOps and AWS CodeCommit (with the Resource Groups Tagging API) that
// the ApplicationSet generators and the image updater's write-back use:
// organizations' repositories, branches and files, and pull (merge)
// requests listed, opened, edited, labelled and closed. Requests must
// carry the server's credentials, as the real APIs require. Tests read
// back what the code under test did.
package scmserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// PullRequest is a request the server holds.
type PullRequest struct {
	Number      int64
	Head, Base  string
	Title, Body string
	Labels      []string
	// HeadSHA and Author are what a test sets when it opens a request
	// itself (Add).
	HeadSHA, Author string
	// Closed requests are listed only when asked for.
	Closed bool
	// Edits counts the updates after it was opened.
	Edits int
}

// Add opens a request as a user would, and returns its number.
func (s *Server) Add(p PullRequest) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.Number = int64(len(s.prs) + 1)
	s.prs = append(s.prs, &p)
	return p.Number
}

// Close closes a request.
func (s *Server) Close(number int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(number); p != nil {
		p.Closed = true
	}
}

// Server is a local GitHub or GitLab API.
type Server struct {
	// URL is the API's address (for GitHub, the /api/v3/ of GitHub
	// Enterprise; for GitLab, the host, the client adding /api/v4/).
	URL   string
	Token string

	// app is the GitHub App installed on the owner (GitHub only).
	app atomic.Pointer[GitHubApp]
	mu  sync.Mutex
	prs []*PullRequest
}

// InstallApp installs a GitHub App on the repository's owner (GitHub
// only): its installation token works as the API's token does.
func (s *Server) InstallApp(app *GitHubApp) { s.app.Store(app) }

// PullRequests returns a copy of the requests opened so far.
func (s *Server) PullRequests() []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PullRequest, len(s.prs))
	for i, p := range s.prs {
		out[i] = *p
		out[i].Labels = slices.Clone(p.Labels)
	}
	return out
}

func (s *Server) find(n int64) *PullRequest {
	for _, p := range s.prs {
		if p.Number == n {
			return p
		}
	}
	return nil
}

func (s *Server) open(head, base, title, body string, labels []string) *PullRequest {
	p := &PullRequest{Number: int64(len(s.prs) + 1), Head: head, Base: base, Title: title, Body: body}
	p.addLabels(labels)
	s.prs = append(s.prs, p)
	return p
}

func (p *PullRequest) addLabels(labels []string) {
	for _, l := range labels {
		if !slices.Contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
		}
	}
}

func start(t testing.TB, s *Server, auth func(*http.Request) bool, mux http.Handler) *Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !auth(r) {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// number reads the last path segment as a request number.
func number(path string) (int64, error) {
	i := strings.LastIndex(path, "/")
	n, err := strconv.ParseInt(path[i+1:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", path[i+1:])
	}
	return n, nil
}
