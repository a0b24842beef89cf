package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"connectrpc.com/connect"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/appstate"
	"github.com/capstan-cd/capstan/internal/cluster"
	reposvc "github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/settings"
)

// Every API operation ends in reply: what it answers (200, as JSON) or an
// error, whose status statusOf decides from its type, written in Argo CD's
// shape ({"error", "message", "code"}, the gRPC code beside the HTTP
// status). Handlers return errors; none writes a status of its own.

// apiError is an error with the status the API answers it with.
type apiError struct {
	status int
	err    error
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// withStatus gives err the status to answer it with.
func withStatus(status int, err error) error { return &apiError{status: status, err: err} }

func notFound(msg string) error   { return withStatus(http.StatusNotFound, errors.New(msg)) }
func badRequest(msg string) error { return withStatus(http.StatusBadRequest, errors.New(msg)) }
func conflict(msg string) error   { return withStatus(http.StatusConflict, errors.New(msg)) }

func unauthorized(msg string) error { return withStatus(http.StatusUnauthorized, errors.New(msg)) }

// errorStatuses are the statuses of the typed errors of the packages the
// API calls.
var errorStatuses = []struct {
	err    error
	status int
}{
	{settings.ErrInvalidCertificate, http.StatusBadRequest},
	{settings.ErrInvalidGPGKey, http.StatusBadRequest},
	{settings.ErrCertificateExists, http.StatusConflict},
	{settings.ErrGPGKeyNotFound, http.StatusNotFound},
	{cluster.ErrLastAppliedAnnotation, http.StatusBadRequest},
}

// statusOf maps an error to the status Argo CD answers it with: an
// apiError's own, 404 for an object outside an Application's tree, a
// Kubernetes API error's kind, a typed error's (errorStatuses), and 500
// for anything else: a fault of the server's.
func statusOf(err error) int {
	var ae *apiError
	var nf appstate.NotFoundError
	switch {
	case errors.As(err, &ae):
		return ae.status
	case errors.As(err, &nf), apierrors.IsNotFound(err):
		return http.StatusNotFound
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return http.StatusBadRequest
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return http.StatusConflict
	case apierrors.IsForbidden(err):
		return http.StatusForbidden
	}
	for _, e := range errorStatuses {
		if errors.Is(err, e.err) {
			return e.status
		}
	}
	return http.StatusInternalServerError
}

// fromRepo is a repo server's error as the API answers it: a revision or
// chart that does not exist is 404, any other request it refuses 400.
func fromRepo(err error) error {
	if err == nil || statusOf(err) != http.StatusInternalServerError {
		return err
	}
	if reposvc.IsNotFound(err) {
		return withStatus(http.StatusNotFound, err)
	}
	return withStatus(http.StatusBadRequest, err)
}

// reply writes v, or err with statusOf's status; a server fault (500) is
// also logged.
func (s *Server) reply(w http.ResponseWriter, v any, err error) {
	if self, ok := v.(selfWriting); ok && err == nil {
		self.writeAnswer(w)
		return
	}
	if err == nil {
		writeJSON(w, http.StatusOK, v)
		return
	}
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		s.opts.Log.Error("API request failed", "error", err)
	}
	writeError(w, status, err.Error())
}

// selfWriting is an answer that writes itself rather than being encoded
// as it is (a list put together from kept encodings).
type selfWriting interface {
	writeAnswer(w http.ResponseWriter)
}

// op is an API operation: it reads its request and returns what to
// answer, or why not.
type op func(r *http.Request, c *caller) (any, error)

// api serves o to authenticated callers and replies with its result.
func (s *Server) api(o op) http.HandlerFunc {
	return s.authorized(func(w http.ResponseWriter, r *http.Request, c *caller) {
		v, err := o(r, c)
		s.reply(w, v, err)
	})
}

// streamOp is a handler that writes its own answer (an event stream, pod
// logs, a terminal's WebSocket). An error it returns is answered as an
// op's, so it returns one only before writing anything; once its answer
// has started, it ends with nil.
type streamOp func(w http.ResponseWriter, r *http.Request, c *caller) error

// streaming adapts a streamOp for the router.
func (s *Server) streaming(o streamOp) http.HandlerFunc {
	return s.authorized(func(w http.ResponseWriter, r *http.Request, c *caller) {
		if err := o(w, r, c); err != nil {
			s.reply(w, nil, err)
		}
	})
}

// publicOp is a handler that needs no session and writes its own answer
// (a login, a redirect to the identity provider, a webhook's reply). An
// error it returns is answered as an op's, so it returns one only before
// writing anything.
type publicOp func(w http.ResponseWriter, r *http.Request) error

// public adapts a publicOp for the router.
func (s *Server) public(o publicOp) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := o(w, r); err != nil {
			s.reply(w, nil, err)
		}
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	// "code" is the gRPC status code, as Argo CD's REST gateway puts it
	// beside the HTTP status (connect's codes are gRPC's numbers).
	code, ok := rpcCodes[status]
	if !ok {
		code = connect.CodeInternal
	}
	writeJSON(w, status, map[string]any{"error": msg, "message": msg, "code": int(code)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode decodes the request's JSON (or, from the web UI, YAML) body into
// v; the error names what was invalid, 413 for a body over the limit and
// 400 otherwise. An empty body is fine when optional.
func decode(r *http.Request, v any, what string, optional bool) error {
	var err error
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/yaml" {
		err = decodeYAML(r.Body, v) // the web UI's "create from YAML"
	} else {
		err = json.NewDecoder(r.Body).Decode(v) // bounded by limit
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return withStatus(http.StatusRequestEntityTooLarge, fmt.Errorf("invalid %s: the body is over the limit of %d bytes", what, tooLarge.Limit))
	}
	if err == nil || (optional && errors.Is(err, io.EOF)) {
		return nil
	}
	return withStatus(http.StatusBadRequest, fmt.Errorf("invalid %s: %w", what, err))
}

// decodeYAML reads a YAML (or JSON) body into v; the body is bounded by
// the request's limit and YAML's aliases by the parser's own bound.
func decodeYAML(body io.Reader, v any) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return io.EOF
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, v)
}
