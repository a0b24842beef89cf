package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/capstan-cd/capstan/internal/api/capstanv1"
	"github.com/capstan-cd/capstan/internal/api/capstanv1/capstanv1connect"
)

// With --grpc-web the CLI's REST calls are carried by the RPC API over
// gRPC-Web, for proxies that pass nothing else. Each method's http option
// (proto/capstan/v1) names the REST call it stands for; the client finds
// the method of a call by that option and builds its request from the
// call's path, query and body.

// rpcMethod is one method of the RPC API.
type rpcMethod interface {
	descriptor() protoreflect.MethodDescriptor
	// call makes the RPC for a REST call and returns the REST answer.
	call(ctx context.Context, c *Client, params map[string]string, query url.Values, body []byte) ([]byte, error)
}

// methods are the unary methods; Watch is the event stream.
var methods = []rpcMethod{
	unary[capstanv1.VersionRequest, capstanv1.Object](capstanv1connect.VersionServiceVersionProcedure),
	unary[capstanv1.SettingsQuery, capstanv1.Object](capstanv1connect.SettingsServiceGetProcedure),
	unary[capstanv1.SessionCreateRequest, capstanv1.SessionResponse](capstanv1connect.SessionServiceCreateProcedure),
	unary[capstanv1.SessionDeleteRequest, capstanv1.Object](capstanv1connect.SessionServiceDeleteProcedure),
	unary[capstanv1.UserInfoRequest, capstanv1.Object](capstanv1connect.SessionServiceGetUserInfoProcedure),
	unary[capstanv1.ApplicationQuery, capstanv1.Object](capstanv1connect.ApplicationServiceListProcedure),
	unary[capstanv1.ApplicationQuery, capstanv1.Object](capstanv1connect.ApplicationServiceGetProcedure),
	unary[capstanv1.ApplicationCreateRequest, capstanv1.Object](capstanv1connect.ApplicationServiceCreateProcedure),
	unary[capstanv1.ApplicationUpdateRequest, capstanv1.Object](capstanv1connect.ApplicationServiceUpdateProcedure),
	unary[capstanv1.ApplicationUpdateSpecRequest, capstanv1.Object](capstanv1connect.ApplicationServiceUpdateSpecProcedure),
	unary[capstanv1.ApplicationPatchRequest, capstanv1.Object](capstanv1connect.ApplicationServicePatchProcedure),
	unary[capstanv1.ApplicationSyncRequest, capstanv1.Object](capstanv1connect.ApplicationServiceSyncProcedure),
	unary[capstanv1.ApplicationRollbackRequest, capstanv1.Object](capstanv1connect.ApplicationServiceRollbackProcedure),
	unary[capstanv1.ApplicationQuery, capstanv1.Object](capstanv1connect.ApplicationServiceTerminateOperationProcedure),
	unary[capstanv1.ApplicationDeleteRequest, capstanv1.Object](capstanv1connect.ApplicationServiceDeleteProcedure),
	unary[capstanv1.ApplicationQuery, capstanv1.Object](capstanv1connect.ApplicationServiceManagedResourcesProcedure),
	unary[capstanv1.ApplicationQuery, capstanv1.Object](capstanv1connect.ApplicationServiceResourceTreeProcedure),
	unary[capstanv1.ApplicationManifestQuery, capstanv1.Object](capstanv1connect.ApplicationServiceGetManifestsProcedure),
	unary[capstanv1.ApplicationResourceRequest, capstanv1.Object](capstanv1connect.ApplicationServiceGetResourceProcedure),
	unary[capstanv1.ApplicationResourceEventsQuery, capstanv1.Object](capstanv1connect.ApplicationServiceListResourceEventsProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.ProjectServiceListProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.ProjectServiceGetProcedure),
	unary[capstanv1.ProjectCreateRequest, capstanv1.Object](capstanv1connect.ProjectServiceCreateProcedure),
	unary[capstanv1.ProjectUpdateRequest, capstanv1.Object](capstanv1connect.ProjectServiceUpdateProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.ProjectServiceDeleteProcedure),
	unary[capstanv1.ProjectTokenCreateRequest, capstanv1.TokenResponse](capstanv1connect.ProjectServiceCreateTokenProcedure),
	unary[capstanv1.ProjectTokenDeleteRequest, capstanv1.Object](capstanv1connect.ProjectServiceDeleteTokenProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.RepositoryServiceListProcedure),
	unary[capstanv1.RepoQuery, capstanv1.Object](capstanv1connect.RepositoryServiceGetProcedure),
	unary[capstanv1.RepoCreateRequest, capstanv1.Object](capstanv1connect.RepositoryServiceCreateProcedure),
	unary[capstanv1.RepoQuery, capstanv1.Object](capstanv1connect.RepositoryServiceDeleteProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.RepoCredsServiceListRepositoryCredentialsProcedure),
	unary[capstanv1.RepoCreateRequest, capstanv1.Object](capstanv1connect.RepoCredsServiceCreateRepositoryCredentialsProcedure),
	unary[capstanv1.RepoQuery, capstanv1.Object](capstanv1connect.RepoCredsServiceDeleteRepositoryCredentialsProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.ClusterServiceListProcedure),
	unary[capstanv1.ClusterQuery, capstanv1.Object](capstanv1connect.ClusterServiceGetProcedure),
	unary[capstanv1.ClusterCreateRequest, capstanv1.Object](capstanv1connect.ClusterServiceCreateProcedure),
	unary[capstanv1.ClusterQuery, capstanv1.Object](capstanv1connect.ClusterServiceDeleteProcedure),
	unary[capstanv1.ClusterQuery, capstanv1.Object](capstanv1connect.ClusterServiceRotateAuthProcedure),
	unary[capstanv1.CanIRequest, capstanv1.CanIResponse](capstanv1connect.AccountServiceCanIProcedure),
	unary[capstanv1.NameQuery, capstanv1.Object](capstanv1connect.AccountServiceListAccountsProcedure),
	unary[capstanv1.UpdatePasswordRequest, capstanv1.Object](capstanv1connect.AccountServiceUpdatePasswordProcedure),
	unary[capstanv1.AccountTokenCreateRequest, capstanv1.TokenResponse](capstanv1connect.AccountServiceCreateTokenProcedure),
	unary[capstanv1.AccountTokenDeleteRequest, capstanv1.Object](capstanv1connect.AccountServiceDeleteTokenProcedure),
}

// unaryMethod is a method with request Req and response Resp.
type unaryMethod[Req, Resp any] struct {
	md        protoreflect.MethodDescriptor
	procedure string
}

func unary[Req, Resp any](procedure string) rpcMethod {
	return &unaryMethod[Req, Resp]{md: methodDescriptor(procedure), procedure: procedure}
}

// methodDescriptor finds a procedure's ("/package.Service/Method") method.
func methodDescriptor(procedure string) protoreflect.MethodDescriptor {
	service, method, _ := strings.Cut(strings.TrimPrefix(procedure, "/"), "/")
	svc := capstanv1.File_capstan_v1_api_proto.Services().ByName(protoreflect.FullName(service).Name())
	if svc == nil || svc.Methods().ByName(protoreflect.Name(method)) == nil {
		panic("no method for procedure " + procedure) // generated code and table disagree: a build error in effect
	}
	return svc.Methods().ByName(protoreflect.Name(method))
}

func (u *unaryMethod[Req, Resp]) descriptor() protoreflect.MethodDescriptor { return u.md }

func (u *unaryMethod[Req, Resp]) call(ctx context.Context, c *Client, params map[string]string, query url.Values, body []byte) ([]byte, error) {
	req := new(Req)
	if err := fromREST(u.md, any(req).(proto.Message), params, query, body); err != nil {
		return nil, err
	}
	client := connect.NewClient[Req, Resp](c.rpcHTTP, c.base+u.procedure, connect.WithGRPCWeb(), connect.WithSchema(u.md))
	cr := connect.NewRequest(req)
	if c.token != "" {
		cr.Header().Set("Authorization", "Bearer "+c.token)
	}
	resp, err := client.CallUnary(ctx, cr)
	if err != nil {
		return nil, restError(err)
	}
	return toREST(u.md, any(resp.Msg).(proto.Message))
}

// rule is a method's http option.
func rule(md protoreflect.MethodDescriptor) *capstanv1.HTTPRule {
	r, _ := proto.GetExtension(md.Options(), capstanv1.E_Http).(*capstanv1.HTTPRule)
	return r
}

var pathParam = regexp.MustCompile(`^\{(\w+)(\.\.\.)?\}$`)

// match finds the method whose http option is the REST call, and the
// call's path parameters.
func match(method, escapedPath string) (rpcMethod, map[string]string) {
	segs := strings.Split(strings.Trim(escapedPath, "/"), "/")
	for _, m := range methods {
		r := rule(m.descriptor())
		if r == nil || r.GetMethod() != method {
			continue
		}
		if params, ok := matchPath(r.GetPath(), segs); ok {
			return m, params
		}
	}
	return nil, nil
}

// matchPath matches escaped path segments against a path with {field}
// segments and a last {field...} taking the rest.
func matchPath(pattern string, segs []string) (map[string]string, bool) {
	pat := strings.Split(strings.Trim(pattern, "/"), "/")
	params := map[string]string{}
	for j, p := range pat {
		if j >= len(segs) {
			return nil, false
		}
		sub := pathParam.FindStringSubmatch(p)
		if sub == nil {
			if segs[j] != p {
				return nil, false
			}
			continue
		}
		last := j + 1
		if sub[2] != "" {
			last = len(segs)
		}
		var vals []string
		for _, seg := range segs[j:last] {
			v, err := url.PathUnescape(seg)
			if err != nil {
				return nil, false
			}
			vals = append(vals, v)
		}
		params[sub[1]] = strings.Join(vals, "/")
		if sub[2] != "" {
			return params, true
		}
	}
	return params, len(segs) == len(pat)
}

// fromREST fills a request from a REST call, as the method's http option
// lays it out: path fields, query fields (by their JSON names) and body.
func fromREST(md protoreflect.MethodDescriptor, msg proto.Message, params map[string]string, query url.Values, body []byte) error {
	r := rule(md)
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	switch {
	case r.GetBody() == "*" && len(body) > 0:
		if err := opts.Unmarshal(body, msg); err != nil {
			return fmt.Errorf("request of %s: %w", md.FullName(), err)
		}
	case r.GetBody() != "" && len(body) > 0:
		fd := fields.ByName(protoreflect.Name(r.GetBody()))
		if fd == nil || fd.Kind() != protoreflect.MessageKind {
			return fmt.Errorf("%s: body %q is not a message field", md.FullName(), r.GetBody())
		}
		v := m.NewField(fd)
		if err := opts.Unmarshal(body, v.Message().Interface()); err != nil {
			return fmt.Errorf("request of %s: %w", md.FullName(), err)
		}
		m.Set(fd, v)
	}
	set := func(fd protoreflect.FieldDescriptor, values []string) error {
		if fd.IsList() {
			list := m.Mutable(fd).List()
			for _, v := range values {
				val, err := scalar(fd, v)
				if err != nil {
					return err
				}
				list.Append(val)
			}
			return nil
		}
		val, err := scalar(fd, values[0])
		if err != nil {
			return err
		}
		m.Set(fd, val)
		return nil
	}
	for name, v := range params {
		if fd := fields.ByName(protoreflect.Name(name)); fd != nil {
			if err := set(fd, []string{v}); err != nil {
				return err
			}
		}
	}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if values := query[fd.JSONName()]; len(values) > 0 && fd.Kind() != protoreflect.MessageKind {
			if err := set(fd, values); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalar parses a path or query value for a scalar field.
func scalar(fd protoreflect.FieldDescriptor, v string) (protoreflect.Value, error) {
	var err error
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v), nil
	case protoreflect.BoolKind:
		var b bool
		if b, err = strconv.ParseBool(v); err == nil {
			return protoreflect.ValueOfBool(b), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		var n int64
		if n, err = strconv.ParseInt(v, 10, 64); err == nil {
			return protoreflect.ValueOfInt64(n), nil
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		var n int64
		if n, err = strconv.ParseInt(v, 10, 32); err == nil {
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
	default:
		err = fmt.Errorf("kind %s is not supported in paths and queries", fd.Kind())
	}
	return protoreflect.Value{}, fmt.Errorf("%s: %q: %w", fd.JSONName(), v, err)
}

// toREST is the REST answer of a response: the message, or the field the
// method's http option names.
func toREST(md protoreflect.MethodDescriptor, resp proto.Message) ([]byte, error) {
	r := rule(md)
	if r.GetResponse() == "" {
		return protojson.Marshal(resp)
	}
	m := resp.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(r.GetResponse()))
	if fd == nil || fd.Kind() != protoreflect.MessageKind {
		return nil, fmt.Errorf("%s: response %q is not a message field", md.FullName(), r.GetResponse())
	}
	return protojson.Marshal(m.Get(fd).Message().Interface())
}

// httpStatus is the REST status of an RPC error code.
var httpStatus = map[connect.Code]int{
	connect.CodeInvalidArgument: http.StatusBadRequest, connect.CodeUnauthenticated: http.StatusUnauthorized,
	connect.CodePermissionDenied: http.StatusForbidden, connect.CodeNotFound: http.StatusNotFound,
	connect.CodeAlreadyExists: http.StatusConflict,
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
	return &Error{Status: status, Message: ce.Message()}
}

// doRPC carries one REST call over its RPC and decodes the answer into out.
func (c *Client) doRPC(ctx context.Context, method, path string, body []byte, out any) error {
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	m, params := match(method, u.EscapedPath())
	if m == nil {
		return fmt.Errorf("%s %s has no RPC to carry it over gRPC-Web", method, u.Path)
	}
	answer, err := m.call(ctx, c, params, u.Query(), body)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(answer, out)
}

// streamRPC carries the application event stream over the Watch method,
// handing each event to each as the stream's data.
func (c *Client) streamRPC(ctx context.Context, path string, each func([]byte) bool) error {
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	md := methodDescriptor(capstanv1connect.ApplicationServiceWatchProcedure)
	req := &capstanv1.ApplicationQuery{}
	if err := fromREST(md, req, nil, u.Query(), nil); err != nil {
		return err
	}
	client := connect.NewClient[capstanv1.ApplicationQuery, capstanv1.ApplicationWatchEvent](c.rpcHTTP,
		c.base+capstanv1connect.ApplicationServiceWatchProcedure, connect.WithGRPCWeb(), connect.WithSchema(md))
	cr := connect.NewRequest(req)
	if c.token != "" {
		cr.Header().Set("Authorization", "Bearer "+c.token)
	}
	stream, err := client.CallServerStream(ctx, cr)
	if err != nil {
		return restError(err)
	}
	defer stream.Close()
	for stream.Receive() {
		event, err := protojson.Marshal(stream.Msg())
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]json.RawMessage{"result": event})
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
