// Package mitmproxy stands in for hosted services whose Go clients have
// their address built in (PagerDuty, Telegram, Pushover, …): an HTTPS
// forward proxy that answers CONNECT tunnels to the hosts a test routes
// itself, with certificates for those hosts from a test authority, so the
// clients make their real calls and a local handler answers them.
//
// A test binary uses it from TestMain, before any HTTPS request: Start
// sets HTTPS_PROXY and SSL_CERT_FILE, which Go reads once per process.
// Loopback addresses are never proxied, so the binary's other servers are
// reached directly.
package mitmproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Proxy is a running proxy.
type Proxy struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	mu     sync.Mutex
	routes map[string]http.Handler
	certs  map[string]*tls.Certificate
	l      net.Listener
}

// Start runs a proxy for the process and points HTTPS_PROXY and
// SSL_CERT_FILE (a file in dir) at it. Hosts not routed are refused.
func Start(dir string) (*Proxy, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "capstan test authority"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ca: ca, caKey: key, routes: map[string]http.Handler{}, certs: map[string]*tls.Certificate{}, l: l}
	go func() { _ = http.Serve(l, http.HandlerFunc(p.connect)) }()
	for k, v := range map[string]string{"HTTPS_PROXY": "http://" + l.Addr().String(), "SSL_CERT_FILE": file} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Route sends the requests to host (as "api.pagerduty.com") to h.
func (p *Proxy) Route(host string, h http.Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.routes[host] = h
}

func (p *Proxy) route(host string) http.Handler {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.routes[host]
}

// connect answers a CONNECT to a routed host by serving the handler over
// TLS inside the tunnel.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if r.Method != http.MethodConnect || err != nil || p.route(host) == nil {
		http.Error(w, "not a routed host", http.StatusForbidden)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if _, err := buf.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || buf.Flush() != nil {
		conn.Close()
		return
	}
	cert, err := p.cert(host)
	if err != nil {
		conn.Close()
		return
	}
	tconn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	go serveConn(tconn, p.route(host))
}

// serveConn serves HTTP/1.1 requests on one connection.
func serveConn(conn net.Conn, h http.Handler) {
	l := &oneConn{conn: conn, done: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				l.close()
			}
		}}
	_ = srv.Serve(l)
}

// cert is a certificate for host from the test authority.
func (p *Proxy) cert(host string) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.certs[host]; c != nil {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, fmt.Errorf("certificate for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	p.certs[host] = c
	return c, nil
}

// oneConn is a listener of one connection, for http.Server.
type oneConn struct {
	conn net.Conn
	once sync.Once
	used bool
	mu   sync.Mutex
	done chan struct{}
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	if !l.used {
		l.used = true
		l.mu.Unlock()
		return l.conn, nil
	}
	l.mu.Unlock()
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) close()         { l.once.Do(func() { close(l.done) }) }
func (l *oneConn) Close() error   { l.close(); return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }
