package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// eventStream writes Server-Sent Events as Argo CD's gateway streams
// results: each message a "data:" line holding {"result": ...}. It is
// safe for concurrent senders.
type eventStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	flusher http.Flusher
	control *http.ResponseController
}

// streamWriteTimeout is how long a write to a stream may wait for the
// client to take it: a client that takes nothing that long is gone.
const streamWriteTimeout = time.Minute

// startEventStream answers the request with an event stream, or writes
// the error and returns nil when the connection cannot stream.
func (s *Server) startEventStream(w http.ResponseWriter) *eventStream {
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.reply(w, nil, errors.New("the connection cannot stream"))
		return nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush() // the client knows at once the stream is open
	return &eventStream{w: w, flusher: flusher, control: http.NewResponseController(w)}
}

// send writes one result; false means the client is gone.
func (e *eventStream) send(result any) bool {
	data, err := json.Marshal(map[string]any{"result": result})
	if err != nil {
		return true // nothing sendable; the stream goes on
	}
	return e.write(fmt.Appendf(nil, "data: %s\n\n", data))
}

// keepAlive writes a comment, so proxies keep an idle stream open.
func (e *eventStream) keepAlive() bool { return e.write([]byte(": keep-alive\n\n")) }

// write writes one message and flushes it, within streamWriteTimeout
// where the connection supports deadlines.
func (e *eventStream) write(msg []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.control.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := e.w.Write(msg); err != nil {
		return false
	}
	e.flusher.Flush()
	return true
}
