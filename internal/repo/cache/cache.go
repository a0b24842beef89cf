// Package cache stores rendered manifests by key. Everything in it can be
// rebuilt, so losing it costs time, never correctness.
package cache

import (
	"context"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache is a byte store with per-entry expiry.
type Cache interface {
	// Get returns the value stored under key, if present and not expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Memory is a bounded in-memory LRU cache.
type Memory struct {
	entries *lru.Cache[string, entry]
	hits    atomic.Int64
	misses  atomic.Int64
}

type entry struct {
	value   []byte
	expires time.Time
}

// NewMemory returns a cache holding at most size entries.
func NewMemory(size int) *Memory {
	c, err := lru.New[string, entry](size)
	if err != nil {
		panic(err) // only for size <= 0, a programming error
	}
	return &Memory{entries: c}
}

// Get implements Cache.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	e, ok := m.entries.Get(key)
	if !ok || time.Now().After(e.expires) {
		if ok {
			m.entries.Remove(key)
		}
		m.misses.Add(1)
		return nil, false, nil
	}
	m.hits.Add(1)
	return e.value, true, nil
}

// Set implements Cache.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	m.entries.Add(key, entry{value: value, expires: time.Now().Add(ttl)})
	return nil
}

// Stats returns the hit and miss counts.
func (m *Memory) Stats() (hits, misses int64) { return m.hits.Load(), m.misses.Load() }
