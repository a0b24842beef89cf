package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/internal/argoapi"
)

// With --grpc-web the CLI's REST calls are carried over gRPC-Web by the
// methods of Argo CD's API (internal/argoapi), for proxies that pass
// nothing else. Each method's google.api.http bindings name the REST calls
// it stands for; the client finds the method of a call by them, builds its
// request from the call's path, query and body, and turns its answer back
// into the REST answer.

// rpcMethod is a method of Argo CD's API with one of its REST bindings.
type rpcMethod struct {
	md      protoreflect.MethodDescriptor
	binding argoapi.Binding
}

// rpcMethods are the bindings of every method, read once.
var rpcMethods = sync.OnceValues(func() ([]rpcMethod, error) {
	schema, err := argoapi.Load()
	if err != nil {
		return nil, err
	}
	methods, err := schema.Methods()
	if err != nil {
		return nil, err
	}
	var out []rpcMethod
	for _, md := range methods {
		for _, b := range argoapi.BindingsOf(md) {
			out = append(out, rpcMethod{md: md, binding: b})
		}
	}
	return out, nil
})

// match finds the method of a REST call and its path parameters. A POST
// with no binding of its own is carried by the GET binding of its path,
// its body read as that method's query (server-side diffs of large
// manifests go so).
func match(method, escapedPath string, streaming bool) (*rpcMethod, map[string]string, error) {
	all, err := rpcMethods()
	if err != nil {
		return nil, nil, err
	}
	for _, try := range []string{method, map[bool]string{true: http.MethodGet}[method == http.MethodPost]} {
		for i := range all {
			m := &all[i]
			if try == "" || m.md.IsStreamingServer() != streaming || m.md.IsStreamingClient() {
				continue
			}
			if params, ok := m.binding.Match(try, escapedPath); ok {
				return m, params, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("%s %s has no RPC to carry it over gRPC-Web", method, escapedPath)
}

// procedure is the method's gRPC path.
func (m *rpcMethod) procedure() string {
	return "/" + string(m.md.Parent().FullName()) + "/" + string(m.md.Name())
}

// request builds the method's request from a REST call.
func (m *rpcMethod) request(params map[string]string, query url.Values, body []byte) (*dynamicpb.Message, error) {
	req := dynamicpb.NewMessage(m.md.Input())
	if err := argoapi.FillRequest(req, m.binding, params, query, body); err != nil {
		return nil, err
	}
	argoapi.FillRequired(req)
	return req, nil
}

// answer is the REST answer of a response: the message, or the field the
// binding names.
func (m *rpcMethod) answer(resp *dynamicpb.Message) ([]byte, error) {
	msg := protoreflect.Message(resp)
	if m.binding.ResponseBody != "" {
		fd := resp.Descriptor().Fields().ByName(protoreflect.Name(m.binding.ResponseBody))
		if fd == nil {
			return nil, fmt.Errorf("%s: no response field %s", m.md.FullName(), m.binding.ResponseBody)
		}
		msg = resp.Get(fd).Message()
	}
	return argoapi.MarshalJSON(msg)
}

// client is a connect client of the method with dynamic messages.
func (m *rpcMethod) client(c *Client) *connect.Client[dynamicpb.Message, dynamicpb.Message] {
	out := m.md.Output()
	return connect.NewClient[dynamicpb.Message, dynamicpb.Message](c.rpcHTTP, c.base+m.procedure(), connect.WithGRPCWeb(),
		connect.WithSchema(m.md), connect.WithResponseInitializer(func(_ connect.Spec, msg any) error {
			if dm, ok := msg.(*dynamicpb.Message); ok {
				*dm = *dynamicpb.NewMessage(out)
			}
			return nil
		}))
}

// doRPC carries one REST call over its RPC and decodes the answer into out.
func (c *Client) doRPC(ctx context.Context, method string, path Path, body []byte, out any) error {
	u, err := url.Parse(string(path))
	if err != nil {
		return err
	}
	m, params, err := match(method, u.EscapedPath(), false)
	if err != nil {
		return err
	}
	req, err := m.request(params, u.Query(), body)
	if err != nil {
		return err
	}
	cr := connect.NewRequest(req)
	c.authorize(cr.Header())
	resp, err := m.client(c).CallUnary(ctx, cr)
	if err != nil {
		return restError(err)
	}
	if out == nil {
		return nil
	}
	answer, err := m.answer(resp.Msg)
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, out)
}

// streamRPC carries a Server-Sent Events call (the application stream,
// a resource tree's, pod logs) over its server-streaming method, handing
// each message to each as the stream's data: {"result": ...}.
func (c *Client) streamRPC(ctx context.Context, path Path, each func([]byte) bool) error {
	u, err := url.Parse(string(path))
	if err != nil {
		return err
	}
	m, params, err := match(http.MethodGet, u.EscapedPath(), true)
	if err != nil {
		return err
	}
	req, err := m.request(params, u.Query(), nil)
	if err != nil {
		return err
	}
	cr := connect.NewRequest(req)
	c.authorize(cr.Header())
	stream, err := m.client(c).CallServerStream(ctx, cr)
	if err != nil {
		return restError(err)
	}
	defer stream.Close()
	for stream.Receive() {
		result, err := argoapi.MarshalJSON(stream.Msg())
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]json.RawMessage{"result": result})
		if err != nil {
			return err
		}
		if !each(data) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return restError(stream.Err())
}

// authorize gives a call the client's token, as Argo CD's CLI does.
func (c *Client) authorize(h http.Header) {
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
}

// httpStatus is the REST status of an RPC error code.
var httpStatus = map[connect.Code]int{
	connect.CodeInvalidArgument: http.StatusBadRequest, connect.CodeUnauthenticated: http.StatusUnauthorized,
	connect.CodePermissionDenied: http.StatusForbidden, connect.CodeNotFound: http.StatusNotFound,
	connect.CodeAlreadyExists: http.StatusConflict, connect.CodeUnimplemented: http.StatusNotImplemented,
	connect.CodeResourceExhausted: http.StatusTooManyRequests, connect.CodeDeadlineExceeded: http.StatusGatewayTimeout,
}

// restError turns an RPC error into the Error a REST call would give.
func restError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	status, ok := httpStatus[ce.Code()]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &Error{Status: status, Message: strings.TrimSpace(ce.Message())}
}
