package faultproxy

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// KubeFront is an HTTPS front for a real Kubernetes API server that
// answers requests with chosen failures before it forwards them, as an
// overloaded or restarting API server (or its load balancer) does.
type KubeFront struct {
	// Config reaches the API server through the front, with a bearer
	// token the front ignores (it forwards as the target's credentials).
	Config *rest.Config

	mu       sync.Mutex
	failures []int
	seen     map[string]int
}

// NewKubeFront starts a front for the API server target reaches, stopped
// when the test ends.
func NewKubeFront(t testing.TB, target *rest.Config) *KubeFront {
	t.Helper()
	rt, err := rest.TransportFor(target)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = rt
	f := &KubeFront{seen: map[string]int{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status := f.next(r.Method); status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
		r.Header.Del("Authorization") // the target's credentials go instead
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	f.Config = &rest.Config{Host: srv.URL, BearerToken: "ignored", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	return f
}

// Fail makes the next requests, one per status, fail with those statuses.
func (f *KubeFront) Fail(statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, statuses...)
}

// Requests is how many requests of method the front was sent, failed or not.
func (f *KubeFront) Requests(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[method]
}

func (f *KubeFront) next(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[method]++
	if len(f.failures) == 0 {
		return 0
	}
	status := f.failures[0]
	f.failures = f.failures[1:]
	return status
}
