package scmserver

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// GitHub starts a GitHub API for the repository owner/repo. Its URL is
// the API's base, as GitHub Enterprise serves it (…/api/v3/).
func GitHub(t testing.TB, token, owner, repo string) *Server {
	s := &Server{Token: token}
	prefix := "/api/v3/repos/" + owner + "/" + repo
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/pulls", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		out := []map[string]any{}
		state := q.Get("state")
		for _, p := range s.prs {
			if p.Closed && state != "closed" && state != "all" || !p.Closed && state == "closed" {
				continue
			}
			if (q.Get("head") == "" || q.Get("head") == owner+":"+p.Head) && (q.Get("base") == "" || q.Get("base") == p.Base) {
				out = append(out, gitHubJSON(s, p))
			}
		}
		reply(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST "+prefix+"/pulls", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Title, Head, Base, Body string }
		if err := decode(r, &in); err != nil || in.Head == "" || in.Base == "" || in.Title == "" {
			reply(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
			return
		}
		for _, p := range s.prs {
			if p.Head == in.Head && p.Base == in.Base {
				reply(w, http.StatusUnprocessableEntity, map[string]string{"message": "A pull request already exists for " + owner + ":" + in.Head + "."})
				return
			}
		}
		reply(w, http.StatusCreated, gitHubJSON(s, s.open(in.Head, in.Base, in.Title, in.Body, nil)))
	})
	mux.HandleFunc("PATCH "+prefix+"/pulls/{n}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.pull(w, r.URL.Path)
		if !ok {
			return
		}
		var in struct{ Title, Body *string }
		if err := decode(r, &in); err != nil {
			reply(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
			return
		}
		if in.Title != nil {
			p.Title = *in.Title
		}
		if in.Body != nil {
			p.Body = *in.Body
		}
		p.Edits++
		reply(w, http.StatusOK, gitHubJSON(s, p))
	})
	mux.HandleFunc("POST "+prefix+"/issues/{n}/labels", func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.pull(w, strings.TrimSuffix(r.URL.Path, "/labels"))
		if !ok {
			return
		}
		var labels []string
		if err := decode(r, &labels); err != nil {
			reply(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
			return
		}
		p.addLabels(labels)
		out := []map[string]string{}
		for _, l := range p.Labels {
			out = append(out, map[string]string{"name": l})
		}
		reply(w, http.StatusOK, out)
	})
	registerApp(mux, "/api/v3/", owner, s.app.Load)
	return start(t, s, func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "Bearer "+token || appAuth(s.app.Load(), r)
	}, gitHubRateLimit(mux)).withPath("/api/v3/")
}

// gitHubRateLimit adds GitHub's rate limit headers to every answer: 5,000
// calls an hour on the core resource, counted from the server's start.
func gitHubRateLimit(next http.Handler) http.Handler {
	var used atomic.Int64
	reset := time.Now().Add(time.Hour).Unix()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := used.Add(1)
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", strconv.FormatInt(5000-n, 10))
		h.Set("X-RateLimit-Used", strconv.FormatInt(n, 10))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
		h.Set("X-RateLimit-Resource", "core")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) withPath(p string) *Server {
	s.URL += p
	return s
}

func (s *Server) pull(w http.ResponseWriter, path string) (*PullRequest, bool) {
	n, err := number(path)
	if err == nil {
		if p := s.find(n); p != nil {
			return p, true
		}
	}
	reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	return nil, false
}

func gitHubJSON(s *Server, p *PullRequest) map[string]any {
	labels := []map[string]string{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]string{"name": l})
	}
	return map[string]any{
		"number": p.Number, "state": "open", "title": p.Title, "body": p.Body, "labels": labels,
		"html_url": strings.TrimSuffix(s.URL, "/api/v3/") + "/pull/" + itoa(p.Number),
		"head":     map[string]string{"ref": p.Head, "sha": p.HeadSHA}, "base": map[string]string{"ref": p.Base},
		"user": map[string]string{"login": p.Author},
	}
}
