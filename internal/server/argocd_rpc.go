package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// Argo CD's gRPC API (application.ApplicationService, session.SessionService,
// …, with Argo CD's messages: internal/argoapi) is served on the API's port
// with connect-go, so one listener answers gRPC over TLS or h2c and
// gRPC-Web beside REST, as argocd-server does. Messages are dynamic, built
// from Argo CD's schema; each method makes, in-process and with the
// caller's token, the REST call its google.api.http option names, so
// authentication, RBAC, validation and errors stay the REST handlers'.
// Unimplemented are Argo CD's operations whose feature Capstan lacks,
// by full RPC name: they answer Argo CD's Unimplemented error (501). The
// list only shrinks (TestUnimplementedOnlyShrinks).
var Unimplemented = []string{}

func (s *Server) argoRoutes() error {
	schema, err := argoapi.Load()
	if err != nil {
		return err
	}
	methods, err := schema.Methods()
	if err != nil {
		return err
	}
	b := &rpcBridge{s: s}
	if err := s.unimplementedREST(methods); err != nil {
		return err
	}
	for _, md := range methods {
		procedure := "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
		opts := []connect.HandlerOption{
			connect.WithSchema(md), connect.WithRequestInitializer(newDynamic),
			connect.WithReadMaxBytes(maxBody), // refused from its declared length, before it is read
			connect.WithInterceptors(rpcMetrics{s.opts.Metrics}),
		}
		var h http.Handler
		bindings := argoapi.BindingsOf(md)
		switch {
		case len(bindings) > 0 && md.IsStreamingClient() && !md.IsStreamingServer():
			h = connect.NewClientStreamHandler(procedure, b.argoClientStream(md, bindings[0]), opts...)
		case len(bindings) == 0 || md.IsStreamingClient():
			h = connect.NewUnaryHandler(procedure, unimplemented(md), opts...)
		case md.IsStreamingServer():
			h = connect.NewServerStreamHandler(procedure, b.argoStream(md, bindings), opts...)
		default:
			h = connect.NewUnaryHandler(procedure, b.argoUnary(md, bindings), opts...)
		}
		s.mux.Handle(procedure, uncompressedGRPCWeb(h))
	}
	return nil
}

// uncompressedGRPCWeb answers gRPC-Web requests uncompressed: Argo CD's
// CLI reads gRPC-Web frames without looking at their compressed flag, so
// a compressed answer would reach it as garbage.
func uncompressedGRPCWeb(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc-web") {
			r.Header.Del("Grpc-Accept-Encoding")
		}
		h.ServeHTTP(w, r)
	})
}

// unimplementedREST routes each of Argo CD's REST operations Capstan does
// not serve yet to Argo CD's Unimplemented error (501, code 12), so a
// client learns the feature is missing rather than that the path is wrong.
func (s *Server) unimplementedREST(methods []protoreflect.MethodDescriptor) error {
	seen := map[string]bool{}
	for _, md := range methods {
		for _, b := range argoapi.BindingsOf(md) {
			if err := s.unimplementedBinding(md, b, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// unimplementedBinding routes one binding to Unimplemented unless a
// handler serves it.
func (s *Server) unimplementedBinding(md protoreflect.MethodDescriptor, b argoapi.Binding, seen map[string]bool) error {
	probe, err := http.NewRequest(b.Method, templateParam.ReplaceAllString(b.Path, "x"), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", md.FullName(), err)
	}
	if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" { // "/" is the web UI
		return nil
	}
	n := 0
	pattern := b.Method + " " + templateParam.ReplaceAllStringFunc(b.Path, func(p string) string {
		n++
		if strings.HasSuffix(p, "=**}") {
			return fmt.Sprintf("{p%d...}", n)
		}
		return fmt.Sprintf("{p%d}", n)
	})
	if seen[pattern] {
		return nil
	}
	seen[pattern] = true
	msg := fmt.Sprintf("%s is not implemented", md.FullName())
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotImplemented, msg)
	})
	return nil
}

// newDynamic makes the request message of a method from its schema.
func newDynamic(spec connect.Spec, msg any) error {
	md, ok := spec.Schema.(protoreflect.MethodDescriptor)
	m, isDynamic := msg.(*dynamicpb.Message)
	if !ok || !isDynamic {
		return fmt.Errorf("%s: no schema for a dynamic message", spec.Procedure)
	}
	*m = *dynamicpb.NewMessage(md.Input())
	return nil
}

func unimplemented(md protoreflect.MethodDescriptor) func(context.Context, *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
	return func(context.Context, *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("%s is not implemented", md.FullName()))
	}
}

// argoStream serves a server-streaming method (Watch, WatchResourceTree,
// PodLogs) from the event stream its REST call answers with: one message
// per Server-Sent Event, from the event's "result".
func (b *rpcBridge) argoStream(md protoreflect.MethodDescriptor, bindings []argoapi.Binding) func(context.Context, *connect.Request[dynamicpb.Message], *connect.ServerStream[dynamicpb.Message]) error {
	return func(ctx context.Context, req *connect.Request[dynamicpb.Message], stream *connect.ServerStream[dynamicpb.Message]) error {
		binding := pickBinding(bindings, req.Msg)
		r, err := argoRESTRequest(ctx, binding, req.Msg, req.Header())
		if err != nil {
			return err
		}
		return b.relay(r, func(result json.RawMessage) error {
			msg := dynamicpb.NewMessage(md.Output())
			if err := argoapi.UnmarshalJSON(result, msg); err != nil {
				return err
			}
			argoapi.FillRequired(msg)
			return stream.Send(msg)
		})
	}
}

// argoUnary serves a unary method through its REST call.
func (b *rpcBridge) argoUnary(md protoreflect.MethodDescriptor, bindings []argoapi.Binding) func(context.Context, *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
	return func(ctx context.Context, req *connect.Request[dynamicpb.Message]) (*connect.Response[dynamicpb.Message], error) {
		clusterIDFromFields(req.Msg)
		binding := pickBinding(bindings, req.Msg)
		r, err := argoRESTRequest(ctx, binding, req.Msg, req.Header())
		if err != nil {
			return nil, err
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		b.s.mux.ServeHTTP(rec, r)
		if rec.status >= 300 {
			return nil, rpcError(rec.status, rec.body.Bytes())
		}
		resp := dynamicpb.NewMessage(md.Output())
		target := protoreflect.Message(resp)
		if binding.ResponseBody != "" {
			fd := md.Output().Fields().ByName(protoreflect.Name(binding.ResponseBody))
			if fd == nil {
				return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("%s: no response field %s", md.FullName(), binding.ResponseBody))
			}
			target = resp.Mutable(fd).Message()
		}
		if rec.body.Len() > 0 {
			if err := argoapi.UnmarshalJSON(rec.body.Bytes(), target); err != nil {
				return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("decoding the answer of %s: %w", md.FullName(), err))
			}
		}
		argoapi.FillRequired(resp)
		return connect.NewResponse(resp), nil
	}
}

// clusterIDFromFields fills a cluster query's id (what its REST path
// carries) from its server or name field when the caller set only those,
// as Argo CD's CLI does over gRPC.
func clusterIDFromFields(m *dynamicpb.Message) {
	fields := m.Descriptor().Fields()
	id := fields.ByName("id")
	if id == nil || id.Kind() != protoreflect.MessageKind || m.Has(id) {
		return
	}
	for _, by := range []string{"server", "name"} {
		fd := fields.ByName(protoreflect.Name(by))
		if fd == nil || fd.Kind() != protoreflect.StringKind || m.Get(fd).String() == "" {
			continue
		}
		idm := m.Mutable(id).Message()
		idm.Set(idm.Descriptor().Fields().ByName("type"), protoreflect.ValueOfString(by))
		idm.Set(idm.Descriptor().Fields().ByName("value"), m.Get(fd))
		return
	}
}

// pickBinding returns the first binding whose path's fields the request
// sets, else the first.
func pickBinding(bindings []argoapi.Binding, msg *dynamicpb.Message) argoapi.Binding {
	for _, b := range bindings {
		complete := true
		for _, m := range templateParam.FindAllStringSubmatch(b.Path, -1) {
			if v, ok := fieldPath(msg, m[1]); !ok || v == "" {
				complete = false
			}
		}
		if complete {
			return b
		}
	}
	return bindings[0]
}

var templateParam = regexp.MustCompile(`\{([\w.]+)(=[^}]*)?\}`)

// argoRESTRequest builds the REST call of a request: its path's fields in
// the path, the body the binding names, the other set scalar fields in the
// query; the caller's token (Argo CD's "token" metadata, or an
// Authorization header or cookie) goes with it.
func argoRESTRequest(ctx context.Context, binding argoapi.Binding, msg *dynamicpb.Message, in http.Header) (*http.Request, error) {
	inPath := map[string]bool{}
	path := templateParam.ReplaceAllStringFunc(binding.Path, func(p string) string {
		sub := templateParam.FindStringSubmatch(p)
		inPath[sub[1]] = true
		v, _ := fieldPath(msg, sub[1])
		if sub[2] == "=**" {
			return v
		}
		return url.PathEscape(v)
	})
	var body []byte
	var err error
	switch binding.Body {
	case "":
	case "*":
		rest := dynamicpb.NewMessage(msg.Descriptor())
		msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if !inPath[string(fd.Name())] {
				rest.Set(fd, v)
			}
			return true
		})
		body, err = argoapi.MarshalJSON(rest)
	default:
		fd := msg.Descriptor().Fields().ByName(protoreflect.Name(binding.Body))
		switch {
		case fd == nil:
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("body %q is not a field", binding.Body))
		case fd.Kind() == protoreflect.MessageKind:
			body, err = argoapi.MarshalJSON(msg.Get(fd).Message())
		default: // a scalar body is its JSON value; the other fields go in the query
			body, err = json.Marshal(msg.Get(fd).Interface())
		}
	}
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	query := url.Values{}
	if binding.Body != "*" {
		msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			name := string(fd.Name())
			if inPath[name] || name == binding.Body {
				return true
			}
			switch {
			case fd.IsList() && fd.Kind() != protoreflect.MessageKind:
				for i := 0; i < v.List().Len(); i++ {
					query.Add(name, fmt.Sprint(v.List().Get(i).Interface()))
				}
			case !fd.IsList() && !fd.IsMap() && fd.Kind() != protoreflect.MessageKind:
				query.Set(name, fmt.Sprint(v.Interface()))
			}
			return true
		})
	}
	if enc := query.Encode(); enc != "" {
		path += "?" + enc
	}
	r, err := http.NewRequestWithContext(ctx, binding.Method, path, bytes.NewReader(body))
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if len(body) > 0 {
		r.Header.Set("Content-Type", "application/json")
	}
	callerHeaders(r, in)
	return r, nil
}

// callerHeaders gives an in-process REST call the gRPC caller's token:
// Argo CD's "token" metadata, or an Authorization header or cookie.
func callerHeaders(r *http.Request, in http.Header) {
	if tok := in.Get("Token"); tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for _, h := range []string{"Authorization", "Cookie"} {
		if v := in.Get(h); v != "" && r.Header.Get(h) == "" {
			r.Header.Set(h, v)
		}
	}
}

// fieldPath returns the text of a (dotted) field of m, "" when unset.
func fieldPath(m protoreflect.Message, path string) (string, bool) {
	parts := strings.Split(path, ".")
	for i, part := range parts {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(part))
		if fd == nil {
			return "", false
		}
		if i == len(parts)-1 && fd.Kind() != protoreflect.MessageKind && !fd.IsList() {
			// A number left at zero is still a value of the path (a
			// token's iat when it is named by id).
			v := fmt.Sprint(m.Get(fd).Interface())
			return v, m.Has(fd) || fd.Kind() != protoreflect.StringKind
		}
		if !m.Has(fd) {
			return "", false
		}
		if fd.Kind() != protoreflect.MessageKind {
			return "", false
		}
		m = m.Get(fd).Message()
	}
	return "", false
}
