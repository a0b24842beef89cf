// Package eventually is the tests' one way to wait for a condition: poll
// it until it holds, and fail the test with what was last seen if it does
// not within a time limit. Waiting on the condition, never a fixed sleep,
// keeps a test as fast as the machine allows and as patient as it needs.
package eventually

import (
	"testing"
	"time"
)

// Options bound one wait.
type Options struct {
	// Timeout is how long the condition may take. Default one minute:
	// generous, as CI machines are shared and slow, and a condition that
	// holds ends the wait at once.
	Timeout time.Duration
	// Interval is the pause between two checks. Default 100 ms.
	Interval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	return o
}

// Within calls cond until it returns "" (the condition holds), and fails t
// with cond's last answer, which says what was seen instead, when opts'
// timeout passes first.
func Within(t testing.TB, opts Options, what string, cond func() string) {
	t.Helper()
	opts = opts.withDefaults()
	deadline := time.Now().Add(opts.Timeout)
	for {
		last := cond()
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s after %s", what, last, opts.Timeout)
			return
		}
		time.Sleep(opts.Interval)
	}
}

// String waits with the default options until cond returns "".
func String(t testing.TB, what string, cond func() string) {
	t.Helper()
	Within(t, Options{}, what, cond)
}

// True waits with the default options until cond returns true.
func True(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Options{}, what, func() string {
		if cond() {
			return ""
		}
		return "false"
	})
}

// NoError waits with the default options until cond returns nil, and
// fails with its last error.
func NoError(t testing.TB, what string, cond func() error) {
	t.Helper()
	Within(t, Options{}, what, func() string {
		if err := cond(); err != nil {
			return err.Error()
		}
		return ""
	})
}
