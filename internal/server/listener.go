package server

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// tlsOrRedirect serves TLS on a listener and answers plain-HTTP clients on
// the same port with a redirect to HTTPS, as Argo CD's server does. It
// tells them apart by the first byte (a TLS handshake starts with 0x16),
// read on a goroutine per connection so a silent client holds up no other.
type tlsOrRedirect struct {
	net.Listener
	config  *tls.Config
	secure  chan net.Conn
	plain   chan net.Conn
	errs    chan error
	stopped chan struct{}
}

func newTLSOrRedirect(l net.Listener, cfg *tls.Config) *tlsOrRedirect {
	t := &tlsOrRedirect{Listener: l, config: cfg, secure: make(chan net.Conn), plain: make(chan net.Conn),
		errs: make(chan error, 1), stopped: make(chan struct{})}
	go t.acceptLoop()
	go func() { _ = http.Serve(plainListener{t}, http.HandlerFunc(redirectToHTTPS)) }()
	return t
}

func (t *tlsOrRedirect) acceptLoop() {
	for {
		c, err := t.Listener.Accept()
		if err != nil {
			t.errs <- err
			close(t.stopped)
			return
		}
		go t.sniff(c)
	}
}

func (t *tlsOrRedirect) sniff(c net.Conn) {
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		_ = c.Close()
		return
	}
	conn := &peekedConn{Conn: c, r: br}
	to := t.plain
	var out net.Conn = conn
	if first[0] == 0x16 {
		to, out = t.secure, tls.Server(conn, t.config)
	}
	select {
	case to <- out:
	case <-t.stopped:
		_ = c.Close()
	}
}

// Accept returns the next TLS connection.
func (t *tlsOrRedirect) Accept() (net.Conn, error) {
	select {
	case c := <-t.secure:
		return c, nil
	case err := <-t.errs:
		t.errs <- err // every later call fails too
		return nil, err
	}
}

// plainListener hands the plain-HTTP connections to the redirect server.
type plainListener struct{ t *tlsOrRedirect }

func (p plainListener) Accept() (net.Conn, error) {
	select {
	case c := <-p.t.plain:
		return c, nil
	case <-p.t.stopped:
		return nil, net.ErrClosed
	}
}
func (p plainListener) Close() error   { return nil }
func (p plainListener) Addr() net.Addr { return p.t.Addr() }

func redirectToHTTPS(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" { // a kubelet's plain-HTTP probe
		healthz(w, r)
		return
	}
	http.Redirect(w, r, "https://"+r.Host+r.URL.RequestURI(), http.StatusTemporaryRedirect)
}

// peekedConn reads first what was peeked.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
