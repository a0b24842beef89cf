package notifications

import (
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A service whose delivery failed is left alone for a while, longer after
// each failure in a row: a service that is down costs one try per period,
// not one per Application and pass, and delays no other service.
const (
	firstBackoff = 10 * time.Second
	maxBackoff   = 5 * time.Minute
)

// Deliveries to one service are paced: serviceRate a second, in bursts of
// serviceBurst, so a mass sync cannot flood a chat channel or an API's
// quota.
const (
	serviceRate  = 10
	serviceBurst = 30
)

// pacing is the per-service state of one Processor: failures in a row,
// when the service may be tried again, and its rate.
type pacing struct {
	mu       sync.Mutex
	failures map[string]int
	until    map[string]time.Time
	limiters map[string]*rate.Limiter
}

// deferred reports whether service is backing off at now.
func (p *pacing) deferred(service string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return now.Before(p.until[service])
}

// result records how a delivery through service went.
func (p *pacing) result(service string, ok bool, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failures == nil {
		p.failures, p.until = map[string]int{}, map[string]time.Time{}
	}
	if ok {
		delete(p.failures, service)
		delete(p.until, service)
		return
	}
	p.failures[service]++
	wait := firstBackoff << min(p.failures[service]-1, 10)
	p.until[service] = now.Add(min(wait, maxBackoff))
}

// limiter is service's rate limiter.
func (p *pacing) limiter(service string) *rate.Limiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limiters == nil {
		p.limiters = map[string]*rate.Limiter{}
	}
	l := p.limiters[service]
	if l == nil {
		l = rate.NewLimiter(serviceRate, serviceBurst)
		p.limiters[service] = l
	}
	return l
}

// urlInText finds the URLs a service's error may quote: webhook URLs
// often carry their secret in the path or query.
var urlInText = regexp.MustCompile(`(https?|nats|wss?)://([^/?#\s"'<>]+)[^\s"'<>]*`)

// redacted is an error's text with every URL cut to its scheme and host
// (credentials in the host part dropped too), fit for logs and Events.
// Punctuation ending a URL is the sentence's and is kept.
func redacted(err error) string {
	if err == nil {
		return ""
	}
	return urlInText.ReplaceAllStringFunc(err.Error(), func(u string) string {
		trimmed := strings.TrimRight(u, ".,:;)")
		m := urlInText.FindStringSubmatch(trimmed)
		if m == nil { // nothing but punctuation after the scheme
			return u
		}
		host := m[2]
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		return m[1] + "://" + host + "/…" + u[len(trimmed):]
	})
}
