// Package faultproxy is a TCP proxy for tests that can take the service
// behind it away: Down cuts every open connection (a fetch in the middle
// of its transfer included) and refuses new ones until Up. It stands in
// for a Git server, a registry or Redis going away and coming back.
// KubeFront fails chosen requests to a Kubernetes API server with chosen
// HTTP statuses.
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards connections on Addr to a target address.
type Proxy struct {
	// Addr is the address clients connect to (127.0.0.1:port).
	Addr   string
	target string
	l      net.Listener

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
}

// New starts a proxy to target, stopped when the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: target, l: l, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		_ = l.Close()
		p.Down()
	})
	return p
}

// Down cuts every connection and refuses new ones.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// Up accepts connections again.
func (p *Proxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

func (p *Proxy) serve() {
	for {
		client, err := p.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		go p.forward(client)
	}
}

func (p *Proxy) forward(client net.Conn) {
	if !p.track(client) {
		_ = client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(server) {
		_ = client.Close()
		if server != nil {
			_ = server.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	_ = client.Close()
	_ = server.Close()
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// track records a connection to cut on Down; false when the proxy is down.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = true
	return true
}
