package registry

import (
	"crypto/tls"
	"net/http"
	"sync"

	"golang.org/x/time/rate"
)

// limited is the transport every registry request goes through: it
// holds each registry to its requests-per-second limit and reports each
// request.
type limited struct {
	next    http.RoundTripper
	limit   func(host string) float64
	observe func(host string, failed bool)

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func (l *limited) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	if lim := l.limiter(host); lim != nil {
		if err := lim.Wait(req.Context()); err != nil {
			return nil, err
		}
	}
	resp, err := l.next.RoundTrip(req)
	if l.observe != nil {
		l.observe(host, err != nil || resp.StatusCode >= 500)
	}
	return resp, err
}

// limiter returns the host's limiter, nil when it has no limit; a
// changed limit applies from the next request.
func (l *limited) limiter(host string) *rate.Limiter {
	if l.limit == nil {
		return nil
	}
	rps := l.limit(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.limiters[host]
	if rps <= 0 {
		delete(l.limiters, host)
		return nil
	}
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(rps), max(1, int(rps)))
		l.limiters[host] = lim
	} else if lim.Limit() != rate.Limit(rps) {
		lim.SetLimit(rate.Limit(rps))
		lim.SetBurst(max(1, int(rps)))
	}
	return lim
}

// perHostTLS sends a request to a registry with a TLS configuration of
// its own through a copy of the base transport made with it.
type perHostTLS struct {
	next http.RoundTripper
	tls  func(host string) *tls.Config

	mu     sync.Mutex
	copies map[string]hostTransport
}

// hostTransport is a host's copy of the base transport and the
// configuration it was made with.
type hostTransport struct {
	cfg *tls.Config
	rt  http.RoundTripper
}

func (p *perHostTLS) RoundTrip(req *http.Request) (*http.Response, error) {
	cfg := p.tls(req.URL.Host)
	if cfg == nil {
		return p.next.RoundTrip(req)
	}
	return p.copyFor(req.URL.Host, cfg).RoundTrip(req)
}

// copyFor returns the host's transport for cfg, made anew when the
// configuration changed (registries.conf read again).
func (p *perHostTLS) copyFor(host string, cfg *tls.Config) http.RoundTripper {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.copies[host]; ok && c.cfg == cfg {
		return c.rt
	}
	base, ok := p.next.(*http.Transport)
	if !ok {
		base = http.DefaultTransport.(*http.Transport)
	}
	rt := base.Clone()
	rt.TLSClientConfig = cfg.Clone()
	if old, ok := p.copies[host]; ok {
		if t, ok := old.rt.(*http.Transport); ok {
			t.CloseIdleConnections()
		}
	}
	p.copies[host] = hostTransport{cfg: cfg, rt: rt}
	return rt
}
