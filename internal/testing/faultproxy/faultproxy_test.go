package faultproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

func TestDownCutsAndRefusesUntilUp(t *testing.T) {
	release := make(chan struct{})
	var sending atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			_, _ = io.WriteString(w, "first part ")
			w.(http.Flusher).Flush()
			sending.Store(true)
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(release)
	p := New(t, strings.TrimPrefix(srv.URL, "http://"))
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) (string, error) {
		resp, err := hc.Get("http://" + p.Addr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get("/"); err != nil || got != "ok" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	// A transfer in progress is cut by Down.
	cut := make(chan error, 1)
	go func() { _, err := get("/slow"); cut <- err }()
	eventually.True(t, "the slow transfer in progress", sending.Load)
	p.Down()
	if err := <-cut; err == nil {
		t.Error("a transfer in progress survived Down")
	}
	if _, err := get("/"); err == nil {
		t.Error("a new connection got through while down")
	}
	p.Up()
	if got, err := get("/"); err != nil || got != "ok" {
		t.Errorf("after Up: %q %v", got, err)
	}
}
