// Package otlpcollector is an OpenTelemetry trace collector for tests: it
// takes what OTLP exporters send over gRPC and keeps each span's name,
// attributes and service, and the headers of the exports.
//
//	c := otlpcollector.Start(t)
//	stop, _ := tracing.Start(ctx, tracing.Options{Address: c.Addr, Insecure: true})
//	// … work …
//	_ = stop(ctx)
//	c.Spans() // every span received
package otlpcollector

import (
	"context"
	"net"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Span is one span received.
type Span struct {
	// Service is its resource's service.name.
	Service string
	Name    string
	// Attrs are its attributes and its resource's, as strings.
	Attrs map[string]string
}

// Collector is a running collector.
type Collector struct {
	// Addr is where exporters send (host:port, plain gRPC).
	Addr string

	coltracepb.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []Span
	headers metadata.MD
}

// Start runs a collector until the test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{Addr: l.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return c
}

// Export takes one batch of spans.
func (c *Collector) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.headers = metadata.Join(c.headers, md)
	for _, rs := range req.GetResourceSpans() {
		resource := attrs(nil, rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				a := attrs(resource, s.GetAttributes())
				c.spans = append(c.spans, Span{Service: resource["service.name"], Name: s.GetName(), Attrs: a})
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func attrs(base map[string]string, kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(base)+len(kvs))
	for k, v := range base {
		out[k] = v
	}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[kv.GetKey()] = v.GetStringValue()
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}

// Spans are the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Header is the values of an export header received.
func (c *Collector) Header(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.headers.Get(name)
}
