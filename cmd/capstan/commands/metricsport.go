package commands

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveProcessMetrics serves the process's default Prometheus registry (Go
// runtime and process collectors, and what packages register there) at
// /metrics on port, in the background until ctx ends; port 0 is off. The
// API server and repo server use it on Argo CD's ports 8083 and 8084.
func serveProcessMetrics(ctx context.Context, log *slog.Logger, port int) {
	if port <= 0 {
		return
	}
	go func() {
		if err := serveAt(ctx, fmt.Sprintf(":%d", port), "/metrics", promhttp.Handler()); err != nil {
			log.Error("metrics server stopped", "error", err.Error(), "port", port)
		}
	}()
}
