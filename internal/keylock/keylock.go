// Package keylock serialises work per key (a repository, a chart
// directory) while letting work on different keys run at once.
package keylock

import "sync"

// Locks holds one mutex per key. The zero value is ready to use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// Lock waits for key's mutex and returns the function that releases it.
func (l *Locks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m, ok := l.locks[key]
	if !ok {
		m = &sync.Mutex{}
		l.locks[key] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}
