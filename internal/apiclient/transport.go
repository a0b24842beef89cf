package apiclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Options are the connection settings given as flags rather than kept in
// the configuration file. The zero value sends no extra header, presents
// no client certificate, trusts the system's certificate authorities and
// does not retry.
type Options struct {
	// Headers are extra "Name: value" headers sent with every request
	// (Argo CD's --header).
	Headers []string
	// ClientCert and ClientKey are the files of a TLS client certificate
	// (--client-crt, --client-crt-key).
	ClientCert, ClientKey string
	// ServerCA is a PEM file of the certificates the server's is checked
	// against (--server-crt).
	ServerCA string
	// RetryMax is how often a request that could not reach the server, or
	// that a proxy answered 502, 503 or 504, is tried again (--http-retry-max).
	RetryMax int
}

// transport builds the HTTP transport for s and o.
func (o Options) transport(s Server) (http.RoundTripper, error) {
	cfg := &tls.Config{InsecureSkipVerify: s.Insecure} // #nosec: only when the user asks with --insecure
	if o.ClientCert != "" || o.ClientKey != "" {
		cert, err := tls.LoadX509KeyPair(o.ClientCert, o.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if o.ServerCA != "" {
		data, err := os.ReadFile(o.ServerCA)
		if err != nil {
			return nil, fmt.Errorf("reading the server certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s holds no PEM certificate", o.ServerCA)
		}
		cfg.RootCAs = pool
	}
	headers := http.Header{}
	for _, h := range o.Headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("header %q is not Name: value", h)
		}
		headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &extras{next: tr, headers: headers, retries: max(o.RetryMax, 0)}, nil
}

// extras adds the extra headers to each request and retries the ones
// that did not reach the server.
type extras struct {
	next    http.RoundTripper
	headers http.Header
	retries int
}

func (e *extras) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(e.headers) > 0 {
		req = req.Clone(req.Context())
		for name, values := range e.headers {
			req.Header[name] = append(req.Header[name], values...)
		}
	}
	for attempt := 0; ; attempt++ {
		resp, err := e.next.RoundTrip(req)
		retry := err != nil || resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout
		if !retry || attempt >= e.retries || req.Context().Err() != nil || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}
