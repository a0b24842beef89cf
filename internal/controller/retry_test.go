package controller

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		s    *v1alpha1.RetryStrategy
		done int64
		want time.Duration
		ok   bool
	}{
		{nil, 0, 0, false},
		{&v1alpha1.RetryStrategy{Limit: 2}, 0, 5 * time.Second, true},
		{&v1alpha1.RetryStrategy{Limit: 2}, 1, 10 * time.Second, true},
		{&v1alpha1.RetryStrategy{Limit: 2}, 2, 0, false},
		{&v1alpha1.RetryStrategy{Limit: -1}, 20, 3 * time.Minute, true},
		{&v1alpha1.RetryStrategy{Limit: 5, Backoff: &v1alpha1.Backoff{Duration: "2", Factor: ptr.To[int64](3), MaxDuration: "1m"}}, 2, 18 * time.Second, true},
		{&v1alpha1.RetryStrategy{Limit: 5, Backoff: &v1alpha1.Backoff{Duration: "10s", MaxDuration: "15s"}}, 3, 15 * time.Second, true},
	} {
		got, ok := retryAfter(tc.s, tc.done)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%+v, %d) = %s, %v; want %s, %v", tc.s, tc.done, got, ok, tc.want, tc.ok)
		}
	}
}
