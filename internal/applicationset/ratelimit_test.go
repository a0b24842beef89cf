package applicationset

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestRateLimited: a provider's calls wait for its limiter; a call that
// cannot get a turn before its deadline fails instead of reaching the
// provider.
func TestRateLimited(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	c := rateLimited(nil, rate.NewLimiter(rate.Every(time.Hour), 1))
	get := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(time.Minute); err != nil {
		t.Fatalf("the first call: %v", err)
	}
	if err := get(50 * time.Millisecond); err == nil {
		t.Fatal("a second call within the hour went through")
	}
	if calls.Load() != 1 {
		t.Errorf("the provider saw %d calls, want 1", calls.Load())
	}
	if limiterFor("https://api.example/v3") != limiterFor("https://api.example/v4") || limiterFor("https://a.example") == limiterFor("https://b.example") {
		t.Error("limiters are not one per API host")
	}
}
