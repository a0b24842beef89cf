package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/capstan-cd/capstan/internal/testing/otlpcollector"
)

// TestSpansReachTheCollector: with an OTLP address, spans are exported
// with the service's name, the --otlp-attrs and the --otlp-headers; the
// last ones are flushed when tracing stops.
func TestSpansReachTheCollector(t *testing.T) {
	collector := otlpcollector.Start(t)
	ctx := context.Background()
	if _, err := Start(ctx, Options{Address: collector.Addr, Attrs: []string{"novalue"}}); err == nil || !strings.Contains(err.Error(), "key:value") {
		t.Errorf("an attribute without a value: %v", err)
	}
	stop, err := Start(ctx, Options{Service: "argocd-server", Address: collector.Addr, Insecure: true,
		Headers: map[string]string{"x-api-key": "k1"}, Attrs: []string{"team:web"}})
	if err != nil {
		t.Fatal(err)
	}
	if !Enabled() {
		t.Error("tracing is not reported enabled")
	}
	_, span := Tracer("test").Start(ctx, "hello", trace.WithAttributes(attribute.String("application", "argocd/guestbook")))
	span.End()
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	spans := collector.Spans()
	if len(spans) != 1 || spans[0].Name != "hello" || spans[0].Service != "argocd-server" || spans[0].Attrs["team"] != "web" ||
		spans[0].Attrs["application"] != "argocd/guestbook" {
		t.Errorf("spans received: %+v", spans)
	}
	if got := collector.Header("x-api-key"); len(got) == 0 || got[0] != "k1" {
		t.Errorf("the export's header: %v", got)
	}
	if Enabled() {
		t.Error("tracing is still reported enabled after stop")
	}
}

func TestNoAddressNoTracing(t *testing.T) {
	stop, err := Start(context.Background(), Options{})
	if err != nil || Enabled() || stop(context.Background()) != nil {
		t.Errorf("without an address: %v, enabled %v", err, Enabled())
	}
}

// TestSampleRatio: --otlp-sample-ratio keeps about that share of new
// traces, and a span whose caller decided follows the caller.
func TestSampleRatio(t *testing.T) {
	collector := otlpcollector.Start(t)
	ctx := context.Background()
	stop, err := Start(ctx, Options{Service: "argocd-repo-server", Address: collector.Addr, Insecure: true, SampleRatio: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	for range 400 {
		_, span := Tracer("test").Start(ctx, "render")
		span.End()
	}
	// A caller that sampled its trace: this component keeps its span.
	sampled := trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, Remote: true}))
	_, span := Tracer("test").Start(sampled, "called")
	span.End()
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	renders, called := 0, 0
	for _, s := range collector.Spans() {
		switch s.Name {
		case "render":
			renders++
		case "called":
			called++
		}
	}
	// 25 % of 400 is 100; a binomial spread of 3 standard deviations is ±26.
	if renders < 60 || renders > 140 {
		t.Errorf("%d of 400 traces kept at a ratio of 0.25", renders)
	}
	if called != 1 {
		t.Errorf("the span of a sampled caller's trace was not kept")
	}
	for ratio, want := range map[float64]bool{0: true, 1: true, 2: true, 0.5: false} {
		if got := sampler(ratio).Description() == sampler(1).Description(); got != want {
			t.Errorf("ratio %v samples every trace: %v, want %v", ratio, got, want)
		}
	}
}
