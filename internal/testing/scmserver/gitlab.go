package scmserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// GitLab starts a GitLab API for the project group/project. Its URL is
// the host; the API answers under /api/v4/.
func GitLab(t testing.TB, token, project string) *Server {
	s := &Server{Token: token}
	prefix := "/api/v4/projects/" + url.PathEscape(project) + "/merge_requests"
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.EscapedPath()
		rest, ok := strings.CutPrefix(path, prefix)
		switch {
		case !ok:
			reply(w, http.StatusNotFound, map[string]string{"message": "404 Project Not Found"})
		case rest == "" && r.Method == http.MethodGet:
			q := r.URL.Query()
			out := []map[string]any{}
			var labels labelList
			_ = labels.UnmarshalJSON([]byte(strconv.Quote(q.Get("labels"))))
			for _, p := range s.prs {
				if state := q.Get("state"); state != "" && state != "all" && (state == "closed") != p.Closed {
					continue
				}
				if !hasLabels(p.Labels, labels) {
					continue
				}
				if (q.Get("source_branch") == "" || q.Get("source_branch") == p.Head) && (q.Get("target_branch") == "" || q.Get("target_branch") == p.Base) {
					out = append(out, gitLabJSON(s, p))
				}
			}
			reply(w, http.StatusOK, out)
		case rest == "" && r.Method == http.MethodPost:
			var in struct {
				Title, Description string
				Source             string `json:"source_branch"`
				Target             string `json:"target_branch"`
				Labels             labelList
			}
			if err := decode(r, &in); err != nil || in.Source == "" || in.Target == "" || in.Title == "" {
				reply(w, http.StatusBadRequest, map[string]string{"message": "400 Bad request"})
				return
			}
			for _, p := range s.prs {
				if p.Head == in.Source && p.Base == in.Target {
					reply(w, http.StatusConflict, map[string][]string{"message": {"Another open merge request already exists for this source branch"}})
					return
				}
			}
			reply(w, http.StatusCreated, gitLabJSON(s, s.open(in.Source, in.Target, in.Title, in.Description, in.Labels)))
		case strings.HasPrefix(rest, "/") && r.Method == http.MethodPut:
			p, ok := s.pull(w, rest)
			if !ok {
				return
			}
			var in struct {
				Title, Description *string
				AddLabels          labelList `json:"add_labels"`
			}
			if err := decode(r, &in); err != nil {
				reply(w, http.StatusBadRequest, map[string]string{"message": "400 Bad request"})
				return
			}
			if in.Title != nil {
				p.Title = *in.Title
			}
			if in.Description != nil {
				p.Body = *in.Description
			}
			p.addLabels(in.AddLabels)
			p.Edits++
			reply(w, http.StatusOK, gitLabJSON(s, p))
		default:
			reply(w, http.StatusMethodNotAllowed, map[string]string{"message": "405 Method Not Allowed"})
		}
	})
	return start(t, s, func(r *http.Request) bool { return r.Header.Get("Private-Token") == token }, handler)
}

// labelList reads GitLab's labels: a comma-separated string or a list.
type labelList []string

func (l *labelList) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		for _, v := range strings.Split(s, ",") {
			if v = strings.TrimSpace(v); v != "" {
				*l = append(*l, v)
			}
		}
		return nil
	}
	return json.Unmarshal(data, (*[]string)(l))
}

func gitLabJSON(s *Server, p *PullRequest) map[string]any {
	return map[string]any{
		"iid": p.Number, "state": "opened", "title": p.Title, "description": p.Body, "labels": p.Labels,
		"source_branch": p.Head, "target_branch": p.Base, "web_url": s.URL + "/merge_requests/" + itoa(p.Number),
		"sha": p.HeadSHA, "author": map[string]string{"username": p.Author},
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func hasLabels(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
