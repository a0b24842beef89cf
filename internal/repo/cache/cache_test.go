package cache

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMemoryExpiryAndBound(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(2)
	_ = m.Set(ctx, "a", []byte("1"), time.Hour)
	_ = m.Set(ctx, "short", []byte("2"), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if v, ok, _ := m.Get(ctx, "a"); !ok || string(v) != "1" {
		t.Errorf("a = %q, %v", v, ok)
	}
	if _, ok, _ := m.Get(ctx, "short"); ok {
		t.Error("expired entry returned")
	}
	for i := range 5 {
		_ = m.Set(ctx, fmt.Sprint(i), nil, time.Hour)
	}
	if m.entries.Len() > 2 {
		t.Errorf("cache holds %d entries, bound is 2", m.entries.Len())
	}
	if hits, misses := m.Stats(); hits != 1 || misses != 1 {
		t.Errorf("hits, misses = %d, %d", hits, misses)
	}
}
