package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"connectrpc.com/connect"
)

// rpcBridge makes the REST calls of the RPC methods (argocd_rpc.go).
type rpcBridge struct{ s *Server }

// rpcCodes are the RPC codes of the REST statuses the API answers with.
var rpcCodes = map[int]connect.Code{
	http.StatusBadRequest: connect.CodeInvalidArgument, http.StatusUnauthorized: connect.CodeUnauthenticated,
	http.StatusForbidden: connect.CodePermissionDenied, http.StatusNotFound: connect.CodeNotFound,
	http.StatusConflict: connect.CodeAlreadyExists, http.StatusRequestEntityTooLarge: connect.CodeResourceExhausted,
	http.StatusTooManyRequests: connect.CodeResourceExhausted, http.StatusNotImplemented: connect.CodeUnimplemented,
	http.StatusGatewayTimeout: connect.CodeDeadlineExceeded, http.StatusUnsupportedMediaType: connect.CodeInvalidArgument,
}

// rpcError is the RPC error of a REST error answer.
func rpcError(status int, data []byte) error {
	var e struct{ Message string }
	if json.Unmarshal(data, &e) != nil || e.Message == "" {
		e.Message = http.StatusText(status)
	}
	code, ok := rpcCodes[status]
	if !ok {
		code = connect.CodeInternal
	}
	return connect.NewError(code, errors.New(e.Message))
}

// relay serves an event-stream REST call in-process and hands each
// Server-Sent Event's "result" to send, as it comes.
func (b *rpcBridge) relay(r *http.Request, send func(result json.RawMessage) error) error {
	w := &eventRelay{recorder: recorder{header: http.Header{}, status: http.StatusOK}, send: func(data []byte) error {
		var event struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(data, &event); err != nil {
			return err
		}
		return send(event.Result)
	}}
	b.s.mux.ServeHTTP(w, r)
	if w.status >= 300 {
		return rpcError(w.status, w.body.Bytes())
	}
	return w.err
}

// recorder is an in-memory http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }

// eventRelay is a ResponseWriter that hands each Server-Sent Events
// message's data to send as it is written.
type eventRelay struct {
	recorder
	send    func([]byte) error
	pending []byte
	err     error
}

func (e *eventRelay) Write(p []byte) (int, error) {
	if e.status >= 300 {
		return e.recorder.Write(p)
	}
	if e.err != nil {
		return 0, e.err
	}
	e.pending = append(e.pending, p...)
	for {
		msg, rest, found := bytes.Cut(e.pending, []byte("\n\n"))
		if !found {
			return len(p), nil
		}
		e.pending = rest
		if data, ok := bytes.CutPrefix(msg, []byte("data: ")); ok && !strings.HasPrefix(string(data), ":") {
			if e.err = e.send(data); e.err != nil {
				return 0, e.err
			}
		}
	}
}

// Flush makes the stream handler treat the relay as a streaming writer.
func (e *eventRelay) Flush() {}
