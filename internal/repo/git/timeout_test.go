package git

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestRequestTimeout: a remote that takes the connection and never
// answers fails the ls-remote after RequestTimeout (Argo CD's
// ARGOCD_GIT_REQUEST_TIMEOUT) rather than holding it as long as the
// caller waits.
func TestRequestTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() }) // held open, never answered
		}
	}()
	r := NewStore(Options{Root: t.TempDir(), RequestTimeout: time.Second}).Repo("http://"+l.Addr().String()+"/silent.git", Creds{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = r.LsRemote(ctx, true)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ls-remote of a silent remote: %v, want the request timeout", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the caller's minute passed: the request timeout did not end it")
	}
}
