package controller

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// maxRetryDelay bounds how long an Application whose reconcile failed
// waits for the next try. controller-runtime's default doubles the wait up
// to 16 minutes, and a Kubernetes API server away for a minute fails every
// try meanwhile: an operation cut short by the outage then stayed Running
// long after the API server was back, since nothing else requeues an
// Application whose spec did not change.
const maxRetryDelay = 10 * time.Second

// retryLimiter is the reconcile queue's limiter of failed reconciles:
// each Application's tries spaced from 5 ms, doubling up to maxRetryDelay,
// and all retries together at most 10 a second (bursts of 100), so a
// fleet failing at once does not hammer the API server it waits for.
func retryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
