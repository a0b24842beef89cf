package registry

import (
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
