package controller

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/capstan-cd/capstan/internal/tracing"
)

// tracer records a span per reconcile, exported when tracing is on. It
// is looked up on each use: one kept from before tracing started would
// stay with the provider of that time.
func tracer() trace.Tracer { return tracing.Tracer("controller") }
