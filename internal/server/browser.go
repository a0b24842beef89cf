package server

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/capstan-cd/capstan/internal/settings"
)

// Browsers send the session cookie with requests other sites make them
// send. A request authenticated by the cookie (no Authorization header)
// that changes something, or opens a WebSocket, is therefore taken only
// when the browser proves it came from Capstan's own pages: a body of a
// type no cross-site form can send (JSON, or the UI's YAML), and an Origin
// (or, without one, a Referer) of this server. Argo CD's answer to
// CVE-2024-22424 is the content type check.

// cookieContentTypes are the body types a cookie-authenticated change may
// have: none of them can be sent cross-site without the server's consent.
var cookieContentTypes = map[string]bool{"application/json": true, "application/yaml": true}

// logoutPath is Argo CD's logout endpoint, which its CLI POSTs the token
// to as a cookie, with no body. Another site can at worst end a session
// there, as Argo CD lets it.
const logoutPath = "/auth/logout"

// browserSafe refuses cross-site requests riding on the session cookie.
func (s *Server) browserSafe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cookieAuthenticated(r) || !(changes(r) || isWebSocket(r)) || r.URL.Path == s.opts.RootPath+logoutPath {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if !cookieContentTypes[mt] {
				writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content type %q: a request with the session cookie must send application/json", mt))
				return
			}
		}
		if !s.sameOrigin(r) {
			writeError(w, http.StatusForbidden, "cross-origin request refused: a request with the session cookie must come from this server's pages")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cookieAuthenticated reports whether the request's credentials are the
// session cookie rather than a bearer token: as requestToken reads them,
// so a request the cookie authenticates is always checked (an
// Authorization header of another scheme does not exempt it).
func cookieAuthenticated(r *http.Request) bool {
	if _, ok := bearerToken(r); ok {
		return false
	}
	c, err := r.Cookie(tokenCookie)
	return err == nil && c.Value != ""
}

// changes reports whether the method may change something.
func changes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// sameOrigin reports whether the request's Origin (or Referer) is this
// server: the host the request was sent to, or argocd-cm's url and
// additionalUrls. A request carrying neither header (not a browser's
// cross-site request, which always names its origin) passes.
func (s *Server) sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" || from == "null" {
		from = r.Header.Get("Referer")
		if from == "" && r.Header.Get("Origin") == "" {
			return true
		}
	}
	u, err := url.Parse(from)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	cm, err := settings.LoadArgoCD(r.Context(), s.opts.Client, s.opts.Namespace)
	if err != nil {
		return false
	}
	for _, known := range cm.URLs() {
		if k, err := url.Parse(known); err == nil && k.Host != "" && strings.EqualFold(k.Host, u.Host) && k.Scheme == u.Scheme {
			return true
		}
	}
	return false
}
