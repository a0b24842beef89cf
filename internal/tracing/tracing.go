// Package tracing exports OpenTelemetry traces of Capstan's work to an
// OTLP collector, as Argo CD's components do when given an OTLP address
// (--otlp-address, otlp.* in argocd-cmd-params-cm): the controller's
// reconciles, the repo server's renders and the API server's calls.
// Without an address nothing is recorded and the spans cost nothing.
//
//	stop, err := tracing.Start(ctx, tracing.Options{Service: "argocd-server", Address: "otel-collector:4317", Insecure: true})
//	defer stop(context.Background())
//	ctx, span := tracing.Tracer("controller").Start(ctx, "reconcile")
//	defer span.End()
package tracing

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options say where traces go.
type Options struct {
	// Service names the component in the traces (service.name).
	Service string
	// Address is the OTLP gRPC collector's host:port. Default "": no
	// tracing.
	Address string
	// Insecure reaches the collector without TLS (--otlp-insecure).
	// Argo CD's default is true.
	Insecure bool
	// Headers are sent with every export (--otlp-headers), such as an
	// API key.
	Headers map[string]string
	// Attrs are key:value attributes of every span's resource
	// (--otlp-attrs).
	Attrs []string
	// SampleRatio is the share of traces recorded, from 0 (none) to 1
	// (all) (--otlp-sample-ratio). A span whose caller sent a sampling
	// decision follows it, so a trace is kept or dropped whole across
	// components. Default 0, read as 1: every trace, as Argo CD's default.
	SampleRatio float64
}

// sampler is the sampler of ratio (0 or more than 1: every trace).
func sampler(ratio float64) sdktrace.Sampler {
	if ratio <= 0 || ratio >= 1 {
		return sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
}

// enabled is whether Start set up an exporter: callers wrap handlers only
// then.
var enabled atomic.Bool

// Enabled reports whether traces are exported.
func Enabled() bool { return enabled.Load() }

// Start exports traces to opts.Address until the returned function is
// called, which flushes what is left. Without an address it does nothing.
func Start(ctx context.Context, opts Options) (stop func(context.Context) error, err error) {
	if opts.Address == "" {
		return func(context.Context) error { return nil }, nil
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", opts.Service)}
	for _, kv := range opts.Attrs {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("OTLP attribute %q: want key:value", kv)
		}
		attrs = append(attrs, attribute.String(k, v))
	}
	clientOpts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(opts.Address), otlptracegrpc.WithHeaders(opts.Headers)}
	if opts.Insecure {
		clientOpts = append(clientOpts, otlptracegrpc.WithInsecure())
	}
	exporter, err := otlptracegrpc.New(ctx, clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter to %s: %w", opts.Address, err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(time.Second)),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)), sdktrace.WithSampler(sampler(opts.SampleRatio)))
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	enabled.Store(true)
	return func(ctx context.Context) error {
		enabled.Store(false)
		return provider.Shutdown(ctx)
	}, nil
}

// Tracer is the tracer of one part of Capstan (controller, repo, server).
// Look it up where a span starts rather than keeping it: one kept from
// before Start would stay with the provider of that time.
func Tracer(name string) trace.Tracer {
	return otel.Tracer("github.com/capstan-cd/capstan/" + name)
}
