package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1/capstanv1connect"
)

// The protobuf API (proto/capstan/v1) is served with connect-go on the
// API's port, so one listener answers gRPC, gRPC-Web and Connect beside
// REST. Each method is one REST call made in-process with the caller's
// credentials: authentication, RBAC, validation and error statuses are
// the REST handlers', never a second copy of them.
func (s *Server) rpcRoutes() {
	b := &rpcBridge{s: s}
	for _, mount := range []func() (string, http.Handler){
		func() (string, http.Handler) { return capstanv1connect.NewVersionServiceHandler(versionRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewSessionServiceHandler(sessionRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewSettingsServiceHandler(settingsRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewApplicationServiceHandler(applicationRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewProjectServiceHandler(projectRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewRepositoryServiceHandler(repositoryRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewRepoCredsServiceHandler(repoCredsRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewClusterServiceHandler(clusterRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewAccountServiceHandler(accountRPC{b}) },
	} {
		path, h := mount()
		s.mux.Handle(path, h)
	}
}

// rpcBridge makes REST calls for the RPC methods.
type rpcBridge struct{ s *Server }

// rpcCodes are the RPC codes of the REST statuses the API answers with.
var rpcCodes = map[int]connect.Code{
	http.StatusBadRequest: connect.CodeInvalidArgument, http.StatusUnauthorized: connect.CodeUnauthenticated,
	http.StatusForbidden: connect.CodePermissionDenied, http.StatusNotFound: connect.CodeNotFound,
	http.StatusConflict: connect.CodeAlreadyExists,
}

// call runs one REST request with the RPC's credentials and returns the
// JSON answer as a Struct, or the REST error as an RPC error.
func (b *rpcBridge) call(ctx context.Context, in http.Header, method, path string, body any) (*structpb.Struct, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	for _, h := range []string{"Authorization", "Cookie"} {
		if v := in.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	b.s.mux.ServeHTTP(rec, req)
	return answerOf(rec.status, rec.body.Bytes())
}

// answerOf turns a REST answer into a Struct or an RPC error.
func answerOf(status int, data []byte) (*structpb.Struct, error) {
	if status >= 300 {
		var e struct{ Message string }
		if json.Unmarshal(data, &e) != nil || e.Message == "" {
			e.Message = http.StatusText(status)
		}
		code, ok := rpcCodes[status]
		if !ok {
			code = connect.CodeInternal
		}
		return nil, connect.NewError(code, errors.New(e.Message))
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("decoding the answer: %w", err))
	}
	out, err := structpb.NewStruct(m)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return out, nil
}

// object wraps a REST answer as the Object message.
func (b *rpcBridge) object(ctx context.Context, in http.Header, method, path string, body any) (*connect.Response[capstanv1.Object], error) {
	st, err := b.call(ctx, in, method, path, body)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&capstanv1.Object{Object: st}), nil
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

func withQuery(path string, q url.Values) string {
	if enc := q.Encode(); enc != "" {
		return path + "?" + enc
	}
	return path
}
