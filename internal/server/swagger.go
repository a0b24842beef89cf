package server

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// swaggerDoc is the API's Swagger document, made once from Argo CD's
// schema.
var swaggerDoc = sync.OnceValues(func() ([]byte, error) {
	s, err := argoapi.Load()
	if err != nil {
		return nil, err
	}
	return s.Swagger()
})

// swaggerJSON answers GET /swagger.json, as argocd-server does, without a
// login.
func (s *Server) swaggerJSON(w http.ResponseWriter, _ *http.Request) {
	data, err := swaggerDoc()
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// swaggerUI answers GET /swagger-ui with a page listing the operations of
// /swagger.json, self-contained (nothing is fetched from elsewhere).
func (s *Server) swaggerUI(w http.ResponseWriter, _ *http.Request) {
	data, err := swaggerDoc()
	if err != nil {
		s.reply(w, nil, err)
		return
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		s.reply(w, nil, err)
		return
	}
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>API documentation</title>` +
		`<style>body{font-family:sans-serif;margin:2em}td{padding:2px 12px;font-family:monospace}</style></head><body>` +
		`<h1>API documentation</h1><p>The whole description: <a href="swagger.json">swagger.json</a> (Swagger 2.0).</p><table>`)
	for _, p := range paths {
		methods := make([]string, 0, len(doc.Paths[p]))
		for m := range doc.Paths[p] {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		for _, m := range methods {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>", strings.ToUpper(m), html.EscapeString(p), html.EscapeString(doc.Paths[p][m].OperationID))
		}
	}
	b.WriteString("</table></body></html>")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprint(w, b.String())
}
