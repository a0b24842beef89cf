package server

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"
)

// rpcMetrics counts the calls of Argo CD's gRPC API (Metrics.RPCStarted,
// Metrics.RPCHandled), whichever of gRPC, gRPC-Web or Connect carries
// them, as go-grpc-middleware's server metrics count Argo CD's.
type rpcMetrics struct{ m Metrics }

func (r rpcMetrics) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		proc, start := req.Spec().Procedure, time.Now()
		r.m.RPCStarted(proc, "unary")
		resp, err := next(ctx, req)
		sent := 0
		if err == nil {
			sent = 1
		}
		r.m.RPCHandled(proc, "unary", grpcCode(err), 1, sent, time.Since(start))
		return resp, err
	}
}

func (r rpcMetrics) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (r rpcMetrics) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		proc, kind, start := conn.Spec().Procedure, streamKind(conn.Spec().StreamType), time.Now()
		r.m.RPCStarted(proc, kind)
		counted := &countingConn{StreamingHandlerConn: conn}
		err := next(ctx, counted)
		r.m.RPCHandled(proc, kind, grpcCode(err), counted.received, counted.sent, time.Since(start))
		return err
	}
}

// countingConn counts the messages a streaming call receives and sends.
type countingConn struct {
	connect.StreamingHandlerConn
	received, sent int
}

func (c *countingConn) Receive(msg any) error {
	err := c.StreamingHandlerConn.Receive(msg)
	if err == nil {
		c.received++
	}
	return err
}

func (c *countingConn) Send(msg any) error {
	err := c.StreamingHandlerConn.Send(msg)
	if err == nil {
		c.sent++
	}
	return err
}

// streamKind names a stream type as the grpc_type label does.
func streamKind(t connect.StreamType) string {
	switch t {
	case connect.StreamTypeClient:
		return "client_stream"
	case connect.StreamTypeServer:
		return "server_stream"
	case connect.StreamTypeBidi:
		return "bidi_stream"
	}
	return "unary"
}

// grpcCodes are gRPC's names of the codes, as the grpc_code label has
// them.
var grpcCodes = map[connect.Code]string{
	connect.CodeCanceled: "Canceled", connect.CodeUnknown: "Unknown", connect.CodeInvalidArgument: "InvalidArgument",
	connect.CodeDeadlineExceeded: "DeadlineExceeded", connect.CodeNotFound: "NotFound", connect.CodeAlreadyExists: "AlreadyExists",
	connect.CodePermissionDenied: "PermissionDenied", connect.CodeResourceExhausted: "ResourceExhausted",
	connect.CodeFailedPrecondition: "FailedPrecondition", connect.CodeAborted: "Aborted", connect.CodeOutOfRange: "OutOfRange",
	connect.CodeUnimplemented: "Unimplemented", connect.CodeInternal: "Internal", connect.CodeUnavailable: "Unavailable",
	connect.CodeDataLoss: "DataLoss", connect.CodeUnauthenticated: "Unauthenticated",
}

// grpcCode is the gRPC code of a call's error: "OK" for none.
func grpcCode(err error) string {
	if err == nil {
		return "OK"
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		if name, ok := grpcCodes[ce.Code()]; ok {
			return name
		}
	}
	return "Unknown"
}
