package applicationset

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// WorkqueueRateLimit is Argo CD's rate limiter of the ApplicationSet
// controller's queue (applicationsetcontroller.wq.*): a token bucket over
// every ApplicationSet, and a per-ApplicationSet exponential backoff after
// failures that starts over once an ApplicationSet has not failed for
// FailureCoolDown. DefaultWorkqueueRateLimit gives Argo CD's defaults.
type WorkqueueRateLimit struct {
	// BucketSize and BucketQPS are the token bucket's burst and rate.
	BucketSize int64
	BucketQPS  float64
	// FailureCoolDown is how long after its last failure an
	// ApplicationSet's backoff starts over; 0 turns the backoff off (each
	// retry waits BaseDelay).
	FailureCoolDown time.Duration
	// BaseDelay is the first retry's wait; each further failure multiplies
	// it by BackoffFactor, up to MaxDelay.
	BaseDelay, MaxDelay time.Duration
	BackoffFactor       float64
}

// DefaultWorkqueueRateLimit is Argo CD's: a bucket of 500 at no rate
// limit, no per-ApplicationSet backoff (1 ms between retries), 1.5 as the
// factor and 1000 s as the longest wait once a cool-down is set.
func DefaultWorkqueueRateLimit() WorkqueueRateLimit {
	return WorkqueueRateLimit{BucketSize: 500, BucketQPS: math.MaxFloat64, BaseDelay: time.Millisecond, MaxDelay: 1000 * time.Second, BackoffFactor: 1.5}
}

// limiter is the queue's rate limiter.
func (l WorkqueueRateLimit) limiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter[reconcile.Request](
		&backoff{limit: l, failures: map[reconcile.Request]failures{}},
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(l.BucketQPS), int(l.BucketSize))},
	)
}

// failures are an ApplicationSet's failures in a row, and the last one's time.
type failures struct {
	n    int
	last time.Time
}

// backoff is the per-ApplicationSet exponential backoff that forgets an
// ApplicationSet's failures after the cool-down.
type backoff struct {
	limit    WorkqueueRateLimit
	mu       sync.Mutex
	failures map[reconcile.Request]failures
}

func (b *backoff) When(item reconcile.Request) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.failures[item]
	now := time.Now()
	if ok && now.Sub(f.last) >= b.limit.FailureCoolDown {
		f = failures{}
	}
	b.failures[item] = failures{n: f.n + 1, last: now}
	if b.limit.FailureCoolDown <= 0 {
		return b.limit.BaseDelay
	}
	wait := float64(b.limit.BaseDelay) * math.Pow(b.limit.BackoffFactor, float64(f.n))
	if wait > float64(b.limit.MaxDelay) {
		return b.limit.MaxDelay
	}
	return time.Duration(wait)
}

func (b *backoff) NumRequeues(item reconcile.Request) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures[item].n
}

func (b *backoff) Forget(item reconcile.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.failures, item)
}
