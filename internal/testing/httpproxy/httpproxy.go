// Package httpproxy runs a real HTTP forward proxy for tests: CONNECT
// tunnels (HTTPS) and absolute-form requests (plain HTTP), counting the
// requests it carried, so a test can prove a client went through it.
package httpproxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a running forward proxy.
type Proxy struct {
	// URL is the proxy's address, http://host:port.
	URL     string
	carried atomic.Int64
}

// Carried counts the requests and tunnels the proxy carried.
func (p *Proxy) Carried() int64 { return p.carried.Load() }

// New starts a proxy that stops when the test ends.
func New(t testing.TB) *Proxy {
	t.Helper()
	p := &Proxy{}
	forward := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.carried.Add(1)
		if r.Method != http.MethodConnect {
			if !r.URL.IsAbs() {
				http.Error(w, "not a proxy request", http.StatusBadRequest)
				return
			}
			forward.ServeHTTP(w, r)
			return
		}
		upstream, err := net.DialTimeout("tcp", r.Host, 10*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			upstream.Close()
			http.Error(w, "cannot tunnel", http.StatusInternalServerError)
			return
		}
		client, buf, err := hj.Hijack()
		if err != nil {
			upstream.Close()
			return
		}
		if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
			upstream.Close()
			client.Close()
			return
		}
		if n := buf.Reader.Buffered(); n > 0 {
			data, _ := buf.Reader.Peek(n)
			_, _ = upstream.Write(data)
		}
		go func() { _, _ = io.Copy(upstream, client); upstream.Close() }()
		go func() { _, _ = io.Copy(client, upstream); client.Close() }()
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}
