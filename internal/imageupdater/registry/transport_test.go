package registry

import (
	"testing"

	"golang.org/x/time/rate"
)

func TestLimitPerRegistry(t *testing.T) {
	limits := map[string]float64{"slow.example.com": 2}
	l := &limited{limit: func(host string) float64 { return limits[host] }, limiters: map[string]*rate.Limiter{}}
	if lim := l.limiter("slow.example.com"); lim == nil || lim.Limit() != 2 || lim.Burst() != 2 {
		t.Fatalf("limiter %+v, want 2 requests per second", lim)
	}
	if lim := l.limiter("fast.example.com"); lim != nil {
		t.Errorf("a registry without limit got a limiter")
	}
	limits["slow.example.com"] = 0.5
	if lim := l.limiter("slow.example.com"); lim.Limit() != 0.5 || lim.Burst() != 1 {
		t.Errorf("a changed limit: %v per second, burst %d", lim.Limit(), lim.Burst())
	}
	limits["slow.example.com"] = 0
	if lim := l.limiter("slow.example.com"); lim != nil {
		t.Errorf("a removed limit still limits")
	}
}
