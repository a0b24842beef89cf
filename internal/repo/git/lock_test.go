package git

import (
	"sync"
	"testing"
	"time"
)

// TestLockTellsWhoWaits: a caller that finds a repository's lock taken is
// counted while it waits, under the URL with its password redacted, and no
// longer once it holds the lock; one that finds it free is never counted.
func TestLockTellsWhoWaits(t *testing.T) {
	var mu sync.Mutex
	waiting := map[string]int{}
	r := &Repo{url: "https://user:secret@git.example.com/shop.git", opts: Options{Waiting: func(url string, delta int) {
		mu.Lock()
		waiting[url] += delta
		mu.Unlock()
	}}}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return waiting["https://user:redacted@git.example.com/shop.git"]
	}
	unlock := r.lock()
	if count() != 0 || len(waiting) != 0 {
		t.Fatalf("a free lock counted a waiter: %v", waiting)
	}
	acquired := make(chan struct{})
	go func() {
		defer close(acquired)
		r.lock()()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for count() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if count() != 1 {
		t.Fatalf("a caller waiting for the lock is not counted: %v", waiting)
	}
	unlock()
	<-acquired
	if count() != 0 {
		t.Errorf("a caller holding the lock is still counted: %v", waiting)
	}
}
