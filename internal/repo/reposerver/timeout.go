package reposerver

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// DefaultCallTimeout bounds each call to a repo server unless told
// otherwise, as Argo CD's --repo-server-timeout-seconds does.
const DefaultCallTimeout = 60 * time.Second

// WithCallTimeout bounds each call the client makes to d (the caller's
// earlier deadline still wins); 0 leaves calls unbounded.
func WithCallTimeout(d time.Duration) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}
