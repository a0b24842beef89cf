package notifications

import (
	"errors"
	"testing"
	"time"
)

func TestPacingBackoff(t *testing.T) {
	var p pacing
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		p.result("slack", false, now)
		if !p.deferred("slack", now.Add(want-time.Millisecond)) || p.deferred("slack", now.Add(want)) {
			t.Fatalf("failure %d: not backing off for exactly %v (until %v)", i+1, want, p.until["slack"].Sub(now))
		}
	}
	if p.deferred("teams", now) {
		t.Fatal("another service is held back by slack's failures")
	}
	p.result("slack", true, now)
	if p.deferred("slack", now) {
		t.Fatal("a success does not end the backoff")
	}
	p.result("slack", false, now)
	if p.deferred("slack", now.Add(firstBackoff)) {
		t.Fatal("the failures before a success still count")
	}
}

func TestPacingRate(t *testing.T) {
	var p pacing
	l := p.limiter("slack")
	if l != p.limiter("slack") || l == p.limiter("teams") {
		t.Fatal("not one limiter per service")
	}
	now := time.Now()
	n := 0
	for l.AllowN(now, 1) {
		n++
	}
	if n != serviceBurst {
		t.Fatalf("a burst of %d, want %d", n, serviceBurst)
	}
	if !l.AllowN(now.Add(time.Second/serviceRate), 1) {
		t.Fatal("no delivery allowed a rate period after the burst")
	}
}

func TestRedacted(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"", ""},
		{"Post \"https://hooks.slack.com/services/T0/B0/s3cret\": EOF", "Post \"https://hooks.slack.com/…\": EOF"},
		{"dial nats://user:pa55@nats.example:4222/x: refused", "dial nats://nats.example:4222/…: refused"},
		{"status 400 from https://u:p@a.example?token=t and http://b.example/path.", "status 400 from https://a.example/… and http://b.example/…."},
		{"https://a.example#frag:x@y", "https://a.example/…"},
		{"no URL here", "no URL here"},
		{"bad address https://.", "bad address https://."},
	} {
		var err error
		if c.err != "" {
			err = errors.New(c.err)
		}
		if got := redacted(err); got != c.want {
			t.Errorf("redacted(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
