package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1/capstanv1connect"
)

// The protobuf API (proto/capstan/v1) is served with connect-go on the
// API's port, so one listener answers gRPC, gRPC-Web and Connect beside
// REST. Each method's http option names a REST call, which the bridge
// makes in-process with the caller's credentials: authentication, RBAC,
// validation and error statuses are the REST handlers', never a second
// copy of them.
func (s *Server) rpcRoutes() {
	b := &rpcBridge{s: s}
	// A message is refused from its declared length, before it is read.
	read := connect.WithReadMaxBytes(maxBody)
	for _, mount := range []func() (string, http.Handler){
		func() (string, http.Handler) { return capstanv1connect.NewVersionServiceHandler(versionRPC{b}, read) },
		func() (string, http.Handler) { return capstanv1connect.NewSessionServiceHandler(sessionRPC{b}, read) },
		func() (string, http.Handler) { return capstanv1connect.NewSettingsServiceHandler(settingsRPC{b}, read) },
		func() (string, http.Handler) {
			return capstanv1connect.NewApplicationServiceHandler(applicationRPC{b}, read)
		},
		func() (string, http.Handler) { return capstanv1connect.NewProjectServiceHandler(projectRPC{b}, read) },
		func() (string, http.Handler) {
			return capstanv1connect.NewRepositoryServiceHandler(repositoryRPC{b}, read)
		},
		func() (string, http.Handler) {
			return capstanv1connect.NewRepoCredsServiceHandler(repoCredsRPC{b}, read)
		},
		func() (string, http.Handler) { return capstanv1connect.NewClusterServiceHandler(clusterRPC{b}, read) },
		func() (string, http.Handler) { return capstanv1connect.NewAccountServiceHandler(accountRPC{b}, read) },
	} {
		path, h := mount()
		s.mux.Handle(path, h)
	}
}

// rpcBridge makes the REST calls of the RPC methods.
type rpcBridge struct{ s *Server }

// rpcCodes are the RPC codes of the REST statuses the API answers with.
var rpcCodes = map[int]connect.Code{
	http.StatusBadRequest: connect.CodeInvalidArgument, http.StatusUnauthorized: connect.CodeUnauthenticated,
	http.StatusForbidden: connect.CodePermissionDenied, http.StatusNotFound: connect.CodeNotFound,
	http.StatusConflict: connect.CodeAlreadyExists, http.StatusRequestEntityTooLarge: connect.CodeResourceExhausted,
	http.StatusTooManyRequests: connect.CodeResourceExhausted, http.StatusNotImplemented: connect.CodeUnimplemented,
	http.StatusGatewayTimeout: connect.CodeDeadlineExceeded,
}

// unary serves one method: its request becomes the REST call its http
// option names, and the answer becomes its response.
func unary[Req, Resp any](ctx context.Context, b *rpcBridge, req *connect.Request[Req]) (*connect.Response[Resp], error) {
	md, ok := req.Spec().Schema.(protoreflect.MethodDescriptor)
	if !ok {
		return nil, connect.NewError(connect.CodeInternal, errors.New("method without a schema"))
	}
	r, err := restRequest(ctx, md, any(req.Msg).(proto.Message), req.Header())
	if err != nil {
		return nil, err
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	b.s.mux.ServeHTTP(rec, r)
	if rec.status >= 300 {
		return nil, rpcError(rec.status, rec.body.Bytes())
	}
	resp := new(Resp)
	if err := fillResponse(md, any(resp).(proto.Message), rec.body.Bytes()); err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("decoding the answer of %s: %w", md.FullName(), err))
	}
	return connect.NewResponse(resp), nil
}

// rule is a method's http option.
func rule(md protoreflect.MethodDescriptor) (*capstanv1.HTTPRule, error) {
	r, _ := proto.GetExtension(md.Options(), capstanv1.E_Http).(*capstanv1.HTTPRule)
	if r == nil || r.GetPath() == "" {
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("%s has no REST call", md.FullName()))
	}
	return r, nil
}

var pathParam = regexp.MustCompile(`\{(\w+)(\.\.\.)?\}`)

// restRequest builds the REST call of a method's request, carrying the
// caller's credentials.
func restRequest(ctx context.Context, md protoreflect.MethodDescriptor, msg proto.Message, in http.Header) (*http.Request, error) {
	rl, err := rule(md)
	if err != nil {
		return nil, err
	}
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	used := map[protoreflect.Name]bool{}
	path := pathParam.ReplaceAllStringFunc(rl.GetPath(), func(p string) string {
		sub := pathParam.FindStringSubmatch(p)
		fd := fields.ByName(protoreflect.Name(sub[1]))
		if fd == nil {
			return p
		}
		used[fd.Name()] = true
		v := fmt.Sprint(m.Get(fd).Interface())
		if sub[2] != "" {
			return v // {field...}: slashes stay separators
		}
		return url.PathEscape(v)
	})
	query := url.Values{}
	inQuery := map[protoreflect.Name]bool{}
	for _, q := range rl.GetQuery() {
		inQuery[protoreflect.Name(q)] = true
	}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if used[fd.Name()] || !m.Has(fd) || (rl.GetBody() != "" && !inQuery[fd.Name()]) {
			continue
		}
		if fd.IsList() {
			list := m.Get(fd).List()
			for j := 0; j < list.Len(); j++ {
				query.Add(fd.JSONName(), fmt.Sprint(list.Get(j).Interface()))
			}
		} else if fd.Kind() != protoreflect.MessageKind {
			query.Set(fd.JSONName(), fmt.Sprint(m.Get(fd).Interface()))
		}
		used[fd.Name()] = true
	}
	var body []byte
	switch rl.GetBody() {
	case "":
	case "*":
		rest := proto.Clone(msg).ProtoReflect()
		for name := range used {
			rest.Clear(fields.ByName(name))
		}
		body, err = protojson.Marshal(rest.Interface())
	default:
		fd := fields.ByName(protoreflect.Name(rl.GetBody()))
		if fd == nil || fd.Kind() != protoreflect.MessageKind {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("%s: body %q is not a message field", md.FullName(), rl.GetBody()))
		}
		body, err = protojson.Marshal(m.Get(fd).Message().Interface())
	}
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if enc := query.Encode(); enc != "" {
		path += "?" + enc
	}
	r, err := http.NewRequestWithContext(ctx, rl.GetMethod(), path, bytes.NewReader(body))
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	for _, h := range []string{"Authorization", "Cookie"} {
		if v := in.Get(h); v != "" {
			r.Header.Set(h, v)
		}
	}
	return r, nil
}

// fillResponse reads a REST answer into a method's response: the whole
// message, or the field its http option names.
func fillResponse(md protoreflect.MethodDescriptor, resp proto.Message, answer []byte) error {
	rl, err := rule(md)
	if err != nil {
		return err
	}
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	if rl.GetResponse() == "" {
		return opts.Unmarshal(answer, resp)
	}
	m := resp.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(rl.GetResponse()))
	if fd == nil || fd.Kind() != protoreflect.MessageKind {
		return fmt.Errorf("response %q is not a message field", rl.GetResponse())
	}
	field := m.NewField(fd)
	if err := opts.Unmarshal(answer, field.Message().Interface()); err != nil {
		return err
	}
	m.Set(fd, field)
	return nil
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

// watch serves the Watch method from the event stream its http option
// names, one response per Server-Sent Event.
func (b *rpcBridge) watch(ctx context.Context, req *connect.Request[capstanv1.ApplicationQuery], stream *connect.ServerStream[capstanv1.ApplicationWatchEvent]) error {
	md, _ := req.Spec().Schema.(protoreflect.MethodDescriptor)
	r, err := restRequest(ctx, md, req.Msg, req.Header())
	if err != nil {
		return err
	}
	return b.relay(r, func(result json.RawMessage) error {
		ev := &capstanv1.ApplicationWatchEvent{}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(result, ev); err != nil {
			return err
		}
		return stream.Send(ev)
	})
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
