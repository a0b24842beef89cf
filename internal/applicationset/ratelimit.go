package applicationset

import (
	"net/http"
	"net/url"
	"sync"

	"golang.org/x/time/rate"

	"github.com/capstan-cd/capstan/internal/applicationset/scm"
)

// Calls to one provider's API from this process are bounded to
// providerRate a second (bursts of providerBurst): a generator listing
// thousands of repositories cannot spend a provider's hourly quota
// (GitHub's is 5,000 calls per token) in one go, and many ApplicationSets
// naming one provider share its rate.
const (
	providerRate  = 20
	providerBurst = 100
)

// limiters holds one limiter per provider API (host).
var limiters sync.Map

// limiterFor returns the limiter of a provider's API address.
func limiterFor(api string) *rate.Limiter {
	key := api
	if u, err := url.Parse(api); err == nil && u.Host != "" {
		key = u.Host
	}
	l, _ := limiters.LoadOrStore(key, rate.NewLimiter(providerRate, providerBurst))
	return l.(*rate.Limiter)
}

// rateLimited is hc (nil: a client with the providers' default timeout)
// waiting for the provider's limiter before each request.
func rateLimited(hc *http.Client, limiter *rate.Limiter) *http.Client {
	c := &http.Client{Timeout: scm.DefaultTimeout}
	if hc != nil {
		c = new(http.Client)
		*c = *hc
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = limitedTransport{next: next, limiter: limiter}
	return c
}

type limitedTransport struct {
	next    http.RoundTripper
	limiter *rate.Limiter
}

// RoundTrip implements http.RoundTripper.
func (t limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.limiter.Wait(r.Context()); err != nil {
		return nil, err
	}
	return t.next.RoundTrip(r)
}
