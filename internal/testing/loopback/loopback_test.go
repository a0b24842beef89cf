package loopback

import (
	"net"
	"testing"
)

func TestAddressListens(t *testing.T) {
	addr := Address()
	if ip := net.ParseIP(addr); ip == nil || !ip.IsLoopback() || addr == "127.0.0.1" {
		t.Fatalf("Address() = %q, want a loopback address other than 127.0.0.1", addr)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	_ = l.Close()
}
