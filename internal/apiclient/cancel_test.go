package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDoStopsWhenCanceled: a canceled context ends a call the server has
// not answered, over REST and over gRPC-Web, instead of waiting for the
// client's timeout: what Ctrl-C and a stopping image updater rely on.
func TestDoStopsWhenCanceled(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	for _, grpcWeb := range []bool{false, true} {
		c := New(Server{Server: strings.TrimPrefix(srv.URL, "http://"), PlainText: true, GRPCWeb: grpcWeb}, "token")
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := c.Do(ctx, "GET", "/api/v1/applications/guestbook", nil, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) && (err == nil || !strings.Contains(err.Error(), "deadline exceeded")) {
			t.Errorf("grpc-web %v: %v, want the context's deadline", grpcWeb, err)
		}
	}
}
