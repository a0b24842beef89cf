package server

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/capstan-cd/capstan/internal/settings"
)

// uiYAML is the body type of the web UI's "create from YAML" and YAML
// edits: always taken, as no cross-site form can send it either.
const uiYAML = "application/yaml"

// contentTypes refuses (415) a REST request under /api/ other than a GET,
// HEAD or OPTIONS whose body is not of one of opts.APIContentTypes, as
// Argo CD's server.api.content.types does against cross-site requests.
// Git webhooks (their providers choose the type), Dex's pages (its login
// form posts a form) and requests without a body or a type are let
// through; so is everything when the list is empty.
func (s *Server) contentTypes(next http.Handler) http.Handler {
	if len(s.opts.APIContentTypes) == 0 {
		return next
	}
	allowed := map[string]bool{uiYAML: true}
	for _, t := range s.opts.APIContentTypes {
		allowed[strings.ToLower(strings.TrimSpace(t))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, s.opts.RootPath)
		header := r.Header.Get("Content-Type")
		if !strings.HasPrefix(path, "/api/") || path == webhookPath || strings.HasPrefix(path, settings.DexPath+"/") || !changes(r) || (header == "" && r.ContentLength == 0) {
			next.ServeHTTP(w, r)
			return
		}
		if mt, _, _ := mime.ParseMediaType(header); !allowed[mt] {
			writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Invalid content type %q: the API takes %s", mt, strings.Join(s.opts.APIContentTypes, ", ")))
			return
		}
		next.ServeHTTP(w, r)
	})
}
