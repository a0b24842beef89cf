package reposerver

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/capstan-cd/capstan/internal/repo"
)

// LogRequests returns an interceptor that logs each render with the
// Application's name and how long it took, in the shape of Argo CD's logs.
func LogRequests(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		attrs := []any{"grpc.method", info.FullMethod, "time_ms", time.Since(start).Milliseconds()}
		if r, ok := req.(*repo.Request); ok {
			attrs = append(attrs, "application", r.AppName)
		}
		if err != nil {
			log.Warn("Manifest generation failed", append(attrs, "error", err.Error())...)
		} else {
			log.Info("Manifests generated", attrs...)
		}
		return resp, err
	}
}
