package component

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/tracing"
)

// otlpFlags are Argo CD's OpenTelemetry flags of a component.
type otlpFlags struct {
	opts    tracing.Options
	headers map[string]string
}

func (f *otlpFlags) add(cmd *cobra.Command, service string) {
	f.opts.Service = service
	cmd.Flags().StringVar(&f.opts.Address, "otlp-address", "", "OTLP gRPC collector (host:port) to export traces to (default: none)")
	cmd.Flags().BoolVar(&f.opts.Insecure, "otlp-insecure", true, "reach the OTLP collector without TLS")
	cmd.Flags().StringToStringVar(&f.headers, "otlp-headers", nil, "headers sent with each export, as key=value pairs")
	cmd.Flags().StringSliceVar(&f.opts.Attrs, "otlp-attrs", nil, "key:value attributes of every span's resource")
	cmd.Flags().Float64Var(&f.opts.SampleRatio, "otlp-sample-ratio", 1, "share of traces to record, from 0.0 (none) to 1.0 (all); a caller's sampling decision is followed")
}

// start exports traces while ctx lasts; the returned function flushes
// them at the end.
func (f *otlpFlags) start(ctx context.Context, log *slog.Logger) (func(), error) {
	f.opts.Headers = f.headers
	stop, err := tracing.Start(ctx, f.opts)
	if err != nil {
		return nil, err
	}
	if f.opts.Address != "" {
		log.Info("exporting traces", "otlp", f.opts.Address)
	}
	return func() {
		if err := stop(context.Background()); err != nil {
			log.Warn("flushing traces", "error", err.Error())
		}
	}, nil
}
