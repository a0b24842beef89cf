package controller

import (
	"math"
	"sync"
	"time"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// Defaults of a retry backoff, as Argo CD's.
const (
	defaultBackoffDuration = 5 * time.Second
	defaultBackoffFactor   = 2
	defaultBackoffMax      = 3 * time.Minute
)

// retryStrategy is the operation's retry, else the sync policy's.
func retryStrategy(app *v1alpha1.Application, op *v1alpha1.Operation) *v1alpha1.RetryStrategy {
	if op.Retry.Limit != 0 {
		return &op.Retry
	}
	if app.Spec.SyncPolicy != nil {
		return app.Spec.SyncPolicy.Retry
	}
	return nil
}

// retryAfter returns the backoff before retry number done+1, and false when
// no retry is left (a negative limit retries forever).
func retryAfter(s *v1alpha1.RetryStrategy, done int64) (time.Duration, bool) {
	if s == nil || s.Limit == 0 || (s.Limit > 0 && done >= s.Limit) {
		return 0, false
	}
	base, factor, limit := defaultBackoffDuration, int64(defaultBackoffFactor), defaultBackoffMax
	if b := s.Backoff; b != nil {
		if d := parseDuration(b.Duration); d > 0 {
			base = d
		}
		if b.Factor != nil && *b.Factor > 0 {
			factor = *b.Factor
		}
		if d := parseDuration(b.MaxDuration); d > 0 {
			limit = d
		}
	}
	wait := time.Duration(float64(base) * math.Pow(float64(factor), float64(done)))
	if wait > limit || wait <= 0 {
		wait = limit
	}
	return wait, true
}

// parseDuration reads "30s" or a bare number of seconds, as Argo CD accepts.
func parseDuration(s string) time.Duration {
	if d, err := time.ParseDuration(s); err == nil {
		return d
	}
	var secs int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		secs = secs*10 + int64(c-'0')
	}
	return time.Duration(secs) * time.Second
}

// retryClock remembers when each Application's next retry is due. A
// controller restart forgets it, and the retry then runs at once.
type retryClock struct {
	mu  sync.Mutex
	due map[string]time.Time
}

func (c *retryClock) set(key string, after time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.due == nil {
		c.due = map[string]time.Time{}
	}
	c.due[key] = time.Now().Add(after)
}

// wait returns how long until the retry of key is due; 0 when it is.
func (c *retryClock) wait(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := time.Until(c.due[key])
	if d <= 0 {
		delete(c.due, key)
		return 0
	}
	return d
}
