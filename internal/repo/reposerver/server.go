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

const (
	serviceName   = "capstan.repo.v1.RepoService"
	renderMethod  = "/" + serviceName + "/Render"
	resolveMethod = "/" + serviceName + "/Resolve"
)

// serviceDesc describes the service by hand; see codec.go for why there is
// no generated code.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*repo.Renderer)(nil),
	Methods: []grpc.MethodDesc{
		unary("Render", repo.Renderer.Render),
		unary("Resolve", repo.Renderer.Resolve),
	},
	Metadata: "capstan/repo/v1",
}

// unary adapts one Renderer method to a gRPC method.
func unary[Req, Resp any](name string, method func(repo.Renderer, context.Context, *Req) (*Resp, error)) grpc.MethodDesc {
	full := "/" + serviceName + "/" + name
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			req := new(Req)
			if err := dec(req); err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "decoding request: %v", err)
			}
			call := func(ctx context.Context, r any) (any, error) {
				resp, err := method(srv.(repo.Renderer), ctx, r.(*Req))
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
func Register(s *grpc.Server, r repo.Renderer) {
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
