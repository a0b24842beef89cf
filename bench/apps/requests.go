package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// countingTransport counts requests to the API server by verb and
// resource, and in count those on the path to Synced: all but Events,
// which are best-effort (dropped when they come faster than they are
// sent), so their count says nothing of the controller's work.
type countingTransport struct {
	next  http.RoundTripper
	count *atomic.Int64
	mu    *sync.Mutex
	by    map[string]int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := requestKind(r)
	if !isEvent(kind) {
		c.count.Add(1)
	}
	c.mu.Lock()
	c.by[kind]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// isEvent reports whether a request kind ("POST events") writes an Event.
func isEvent(kind string) bool { return strings.HasSuffix(kind, " events") }

// requestKind names a request by verb and resource: "PATCH configmaps",
// "PATCH applications/status", "PATCH configmaps (dry run)".
func requestKind(r *http.Request) string {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	res := r.URL.Path
	for i, s := range segs {
		if s == "namespaces" && i+2 < len(segs) {
			res = segs[i+2]
			if i+4 < len(segs) {
				res += "/" + segs[i+4]
			}
			break
		}
	}
	kind := r.Method + " " + res
	if r.URL.Query().Get("watch") == "true" {
		kind += " (watch)"
	}
	if r.URL.Query().Has("dryRun") {
		kind += " (dry run)"
	}
	return kind
}

// printRequests prints the requests counted since the last call, most
// first, and forgets them.
func printRequests(by map[string]int64, mu *sync.Mutex, n int, quiet bool) {
	mu.Lock()
	defer mu.Unlock()
	type kv struct {
		k string
		v int64
	}
	var list []kv
	for k, v := range by {
		list = append(list, kv{k, v})
		delete(by, k)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].v > list[j].v })
	for _, e := range list {
		if quiet {
			break
		}
		fmt.Printf("  %8d  %5.2f/app  %s\n", e.v, float64(e.v)/float64(n), e.k)
	}
}
