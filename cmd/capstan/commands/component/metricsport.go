package component

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/httpserve"
	"github.com/capstan-cd/capstan/internal/profiler"
)

// metricsFlags place a component's metrics at /metrics: its own (a
// metrics.Server's or metrics.RepoServer's handler) with the process's
// default Prometheus registry (Go runtime and process collectors). The API
// server and repo server use them on Argo CD's ports 8083 and 8084.
type metricsFlags struct {
	address string
	port    int
}

func (f *metricsFlags) add(cmd *cobra.Command, port int) {
	cmd.Flags().StringVar(&f.address, "metrics-address", "", "address to serve metrics on (default: every address)")
	cmd.Flags().IntVar(&f.port, "metrics-port", port, "serve Prometheus metrics on this port (0: off)")
}

// serveHandler serves h as /metrics, and the pprof endpoints while the
// install's profiler setting is on, in the background until ctx ends.
func (f *metricsFlags) serveHandler(ctx context.Context, log *slog.Logger, h http.Handler) {
	if f.port <= 0 {
		return
	}
	addr := net.JoinHostPort(f.address, strconv.Itoa(f.port))
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	profiler.Register(mux, profiler.Path()) // Argo CD's <component>.profile.enabled
	go func() {
		if err := httpserve.ListenAndServe(ctx, addr, mux); err != nil {
			log.Error("metrics server stopped", "error", err.Error(), "address", addr)
		}
	}()
}
