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
	"strconv"

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
		func() (string, http.Handler) { return capstanv1connect.NewApplicationServiceHandler(applicationRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewProjectServiceHandler(projectRPC{b}) },
		func() (string, http.Handler) { return capstanv1connect.NewRepositoryServiceHandler(repositoryRPC{b}) },
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

type versionRPC struct{ *rpcBridge }

func (v versionRPC) Version(ctx context.Context, req *connect.Request[capstanv1.VersionRequest]) (*connect.Response[capstanv1.Object], error) {
	return v.object(ctx, req.Header(), "GET", "/api/version", nil)
}

type sessionRPC struct{ *rpcBridge }

func (s sessionRPC) Create(ctx context.Context, req *connect.Request[capstanv1.SessionCreateRequest]) (*connect.Response[capstanv1.SessionResponse], error) {
	st, err := s.call(ctx, req.Header(), "POST", "/api/v1/session", map[string]string{"username": req.Msg.GetUsername(), "password": req.Msg.GetPassword()})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&capstanv1.SessionResponse{Token: st.GetFields()["token"].GetStringValue()}), nil
}

func (s sessionRPC) GetUserInfo(ctx context.Context, req *connect.Request[capstanv1.UserInfoRequest]) (*connect.Response[capstanv1.Object], error) {
	return s.object(ctx, req.Header(), "GET", "/api/v1/session/userinfo", nil)
}

type applicationRPC struct{ *rpcBridge }

func appQuery(q *capstanv1.ApplicationQuery) url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"name": q.GetName(), "selector": q.GetSelector(), "appNamespace": q.GetAppNamespace(), "resourceVersion": q.GetResourceVersion()} {
		if val != "" {
			v.Set(k, val)
		}
	}
	for _, p := range q.GetProjects() {
		v.Add("projects", p)
	}
	return v
}

// appPath is an Application's REST path, with its namespace as a query.
func appPath(name, namespace, suffix string) string {
	v := url.Values{}
	if namespace != "" {
		v.Set("appNamespace", namespace)
	}
	return withQuery("/api/v1/applications/"+url.PathEscape(name)+suffix, v)
}

func (a applicationRPC) List(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", withQuery("/api/v1/applications", appQuery(req.Msg)), nil)
}

func (a applicationRPC) Get(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), ""), nil)
}

func (a applicationRPC) Create(ctx context.Context, req *connect.Request[capstanv1.Object]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "POST", "/api/v1/applications", req.Msg.GetObject().AsMap())
}

func (a applicationRPC) Sync(ctx context.Context, req *connect.Request[capstanv1.ApplicationSyncRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "POST", appPath(m.GetName(), m.GetAppNamespace(), "/sync"),
		map[string]any{"revision": m.GetRevision(), "prune": m.GetPrune(), "dryRun": m.GetDryRun()})
}

func (a applicationRPC) Rollback(ctx context.Context, req *connect.Request[capstanv1.ApplicationRollbackRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	return a.object(ctx, req.Header(), "POST", appPath(m.GetName(), m.GetAppNamespace(), "/rollback"),
		map[string]any{"id": m.GetId(), "prune": m.GetPrune(), "dryRun": m.GetDryRun()})
}

func (a applicationRPC) TerminateOperation(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "DELETE", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), "/operation"), nil)
}

func (a applicationRPC) Delete(ctx context.Context, req *connect.Request[capstanv1.ApplicationDeleteRequest]) (*connect.Response[capstanv1.Object], error) {
	m := req.Msg
	q := url.Values{}
	if m.Cascade != nil {
		q.Set("cascade", strconv.FormatBool(m.GetCascade()))
	}
	if m.GetPropagationPolicy() != "" {
		q.Set("propagationPolicy", m.GetPropagationPolicy())
	}
	if m.GetAppNamespace() != "" {
		q.Set("appNamespace", m.GetAppNamespace())
	}
	return a.object(ctx, req.Header(), "DELETE", withQuery("/api/v1/applications/"+url.PathEscape(m.GetName()), q), nil)
}

func (a applicationRPC) ManagedResources(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), "/managed-resources"), nil)
}

func (a applicationRPC) ResourceTree(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", appPath(req.Msg.GetName(), req.Msg.GetAppNamespace(), "/resource-tree"), nil)
}

// Watch relays the event stream of GET /api/v1/stream/applications.
func (a applicationRPC) Watch(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery], stream *connect.ServerStream[capstanv1.ApplicationWatchEvent]) error {
	r, err := http.NewRequestWithContext(ctx, "GET", withQuery("/api/v1/stream/applications", appQuery(req.Msg)), nil)
	if err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	if v := req.Header().Get("Authorization"); v != "" {
		r.Header.Set("Authorization", v)
	}
	w := &eventRelay{recorder: recorder{header: http.Header{}, status: http.StatusOK}, send: func(data []byte) error {
		var msg struct {
			Result struct {
				Type        string         `json:"type"`
				Application map[string]any `json:"application"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &msg); err != nil {
			return err
		}
		app, err := structpb.NewStruct(msg.Result.Application)
		if err != nil {
			return err
		}
		return stream.Send(&capstanv1.ApplicationWatchEvent{Type: msg.Result.Type, Application: app})
	}}
	a.s.mux.ServeHTTP(w, r)
	if w.status >= 300 {
		_, err := answerOf(w.status, w.body.Bytes())
		return err
	}
	return w.err
}

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
		i := bytes.Index(e.pending, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		msg := e.pending[:i]
		e.pending = e.pending[i+2:]
		if data, ok := bytes.CutPrefix(msg, []byte("data: ")); ok {
			if e.err = e.send(data); e.err != nil {
				return 0, e.err
			}
		}
	}
}

// Flush makes the stream handler treat the relay as a streaming writer.
func (e *eventRelay) Flush() {}

type projectRPC struct{ *rpcBridge }

func (p projectRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return p.object(ctx, req.Header(), "GET", "/api/v1/projects", nil)
}

func (p projectRPC) Get(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return p.object(ctx, req.Header(), "GET", "/api/v1/projects/"+url.PathEscape(req.Msg.GetName()), nil)
}

type repositoryRPC struct{ *rpcBridge }

func (r repositoryRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return r.object(ctx, req.Header(), "GET", "/api/v1/repositories", nil)
}

type clusterRPC struct{ *rpcBridge }

func (c clusterRPC) List(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return c.object(ctx, req.Header(), "GET", "/api/v1/clusters", nil)
}

type accountRPC struct{ *rpcBridge }

func (a accountRPC) CanI(ctx context.Context, req *connect.Request[capstanv1.CanIRequest]) (*connect.Response[capstanv1.CanIResponse], error) {
	m := req.Msg
	st, err := a.call(ctx, req.Header(), "GET", fmt.Sprintf("/api/v1/account/can-i/%s/%s/%s", url.PathEscape(m.GetResource()), url.PathEscape(m.GetAction()), m.GetSubresource()), nil)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&capstanv1.CanIResponse{Value: st.GetFields()["value"].GetStringValue()}), nil
}

func (a accountRPC) ListAccounts(ctx context.Context, req *connect.Request[capstanv1.NameQuery]) (*connect.Response[capstanv1.Object], error) {
	return a.object(ctx, req.Header(), "GET", "/api/v1/account", nil)
}
