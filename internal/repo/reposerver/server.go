// Package reposerver carries the repo server's Renderer over gRPC, for when
// the controller and the API server run apart from it. Inside `capstan run`
// they call repo.Service directly instead.
package reposerver

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/chartrepo"
	"github.com/capstan-cd/capstan/internal/repo/git"
	"github.com/capstan-cd/capstan/internal/repo/pathsafe"
)

const serviceName = "capstan.repo.v1.RepoService"

// DefaultMaxMessageMB is how large a message, in MiB, a repo server takes
// or sends unless told otherwise: Argo CD's default
// reposerver.grpc.max.size. A RenderFiles archive needs twice its size
// (base64 in JSON).
const DefaultMaxMessageMB = 100

// MessageLimits are the server options bounding each message, received or
// sent, to mb MiB (DefaultMaxMessageMB when mb is not positive), as Argo
// CD's reposerver.grpc.max.size: a larger request or answer fails with
// ResourceExhausted.
func MessageLimits(mb int) []grpc.ServerOption {
	if mb <= 0 {
		mb = DefaultMaxMessageMB
	}
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(mb << 20), grpc.MaxSendMsgSize(mb << 20)}
}

// method is the full gRPC name of one of the service's methods.
func method(name string) string { return "/" + serviceName + "/" + name }

// serviceDesc describes the service by hand; see codec.go for why there is
// no generated code.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*repo.Server)(nil),
	Methods: []grpc.MethodDesc{
		unary("Render", repo.Server.Render),
		unary("Resolve", repo.Server.Resolve),
		unary("Refs", repo.Server.Refs),
		unary("Apps", repo.Server.Apps),
		unary("AppDetails", repo.Server.AppDetails),
		unary("RevisionMetadata", repo.Server.RevisionMetadata),
		unary("ChartDetails", repo.Server.ChartDetails),
		unary("OCIMetadata", repo.Server.OCIMetadata),
		unary("Charts", repo.Server.Charts),
		unary("RenderFiles", repo.Server.RenderFiles),
		unary("GitDirectories", repo.Server.GitDirectories),
		unary("GitFiles", repo.Server.GitFiles),
		unary("Plugins", repo.Server.Plugins),
	},
	Metadata: "capstan/repo/v1",
}

// unary adapts one repo.Server method to a gRPC method.
func unary[Req, Resp any](name string, call func(repo.Server, context.Context, *Req) (*Resp, error)) grpc.MethodDesc {
	full := method(name)
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			req := new(Req)
			if err := dec(req); err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "decoding request: %v", err)
			}
			call := func(ctx context.Context, r any) (any, error) {
				resp, err := call(srv.(repo.Server), ctx, r.(*Req))
				if err != nil {
					return nil, toStatus(err)
				}
				return resp, nil
			}
			if interceptor == nil {
				return call(ctx, req)
			}
			return interceptor(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: full}, call)
		},
	}
}

// Register adds the repo service, backed by r, to a gRPC server.
func Register(s *grpc.Server, r repo.Server) {
	s.RegisterService(&serviceDesc, r)
}

// codeOf maps the repo server's error kinds to gRPC codes.
var codeOf = []struct {
	err  error
	code codes.Code
}{
	{git.ErrAuthentication, codes.Unauthenticated},
	{git.ErrRevisionNotFound, codes.NotFound},
	{chartrepo.ErrChartNotFound, codes.NotFound},
	{pathsafe.ErrOutOfBounds, codes.InvalidArgument},
	{repo.ErrCachedFailure, codes.FailedPrecondition},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
	{context.Canceled, codes.Canceled},
}

func toStatus(err error) error {
	for _, c := range codeOf {
		if errors.Is(err, c.err) {
			return status.Error(c.code, err.Error())
		}
	}
	return status.Error(codes.Unknown, err.Error())
}
