package server

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// gzipper wraps a handler so it gzips responses.
type gzipper func(http.Handler) http.HandlerFunc

// newGzipper gzips the REST API's responses for clients that take gzip
// (server.enable.gzip). Event streams, gRPC (which frames its own
// messages), WebSocket upgrades and the web UI's files, compressed once at
// start, pass through untouched.
func newGzipper() (gzipper, error) {
	// No minimum size: a response is compressed from its first write, so
	// a streamed one (followed logs) flushes each part at once instead of
	// holding it until a threshold is reached.
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(0), gzhttp.ExceptContentTypes([]string{"text/event-stream"}))
	if err != nil {
		return nil, err
	}
	return func(h http.Handler) http.HandlerFunc {
		gz := wrap(h)
		return func(w http.ResponseWriter, r *http.Request) {
			if !compressible(r) {
				h.ServeHTTP(w, r)
				return
			}
			gz.ServeHTTP(w, r)
		}
	}, nil
}

func compressible(r *http.Request) bool {
	return strings.Contains(r.URL.Path, "/api/") &&
		!strings.Contains(r.Header.Get("Accept"), "text/event-stream") &&
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") &&
		r.Header.Get("Upgrade") == ""
}
