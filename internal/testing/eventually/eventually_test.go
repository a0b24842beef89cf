package eventually_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/eventually"
)

// recorder is a testing.TB that records a failure instead of ending the
// test, so a wait that must fail can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestWithin(t *testing.T) {
	calls := 0
	eventually.Within(t, eventually.Options{Interval: time.Millisecond}, "third call", func() string {
		if calls++; calls < 3 {
			return fmt.Sprintf("call %d", calls)
		}
		return ""
	})
	if calls != 3 {
		t.Errorf("%d calls, want 3", calls)
	}

	r := &recorder{TB: t}
	eventually.Within(r, eventually.Options{Timeout: 20 * time.Millisecond, Interval: time.Millisecond}, "never", func() string { return "not yet" })
	if r.failed != "never: still not yet after 20ms" {
		t.Errorf("failure %q", r.failed)
	}
}

func TestForms(t *testing.T) {
	n := 0
	eventually.True(t, "true", func() bool { n++; return n > 1 })
	eventually.NoError(t, "no error", func() error {
		if n++; n < 4 {
			return errors.New("not yet")
		}
		return nil
	})
}

// A test waits for what it expects to see, and says what it saw instead.
func ExampleString() {
	var t testing.TB // the test's own t
	ready := time.Now().Add(50 * time.Millisecond)
	eventually.String(t, "the server is ready", func() string {
		if time.Now().Before(ready) {
			return "starting"
		}
		return ""
	})
}
