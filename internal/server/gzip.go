package server

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compressed gzips the REST API's responses for clients that take gzip
// (server.enable.gzip). Event streams, gRPC (which frames its own
// messages), WebSocket upgrades and the web UI's files, compressed once at
// start, pass through untouched.
func compressed(h http.Handler) http.Handler {
	gz := gzhttp.GzipHandler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !compressible(r) {
			h.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}

func compressible(r *http.Request) bool {
	return strings.Contains(r.URL.Path, "/api/") &&
		!strings.Contains(r.Header.Get("Accept"), "text/event-stream") &&
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") &&
		r.Header.Get("Upgrade") == ""
}
