package keylock

import (
	"sync"
	"testing"
)

func TestOneHolderPerKey(t *testing.T) {
	var l Locks
	var wg sync.WaitGroup
	held := map[string]int{}
	var mu sync.Mutex
	for i := range 50 {
		key := []string{"a", "b"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := l.Lock(key)
			defer unlock()
			mu.Lock()
			held[key]++
			n := held[key]
			mu.Unlock()
			if n != 1 {
				t.Errorf("%d holders of %s", n, key)
			}
			mu.Lock()
			held[key]--
			mu.Unlock()
		}()
	}
	wg.Wait()
}
