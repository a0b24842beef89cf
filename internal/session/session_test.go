package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// clock is a settable time for the tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newManager(t *testing.T, key string) (*Manager, *clock) {
	t.Helper()
	m, err := NewManager([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	m.now = c.now
	return m, c
}

func TestTokens(t *testing.T) {
	m, c := newManager(t, "server-secret-key")
	tok, err := m.Create("admin", time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := m.Parse(tok)
	if err != nil || claims.Subject != "admin" || claims.Issuer != "argocd" || !claims.ExpiresAt.Equal(c.t.Add(time.Hour)) {
		t.Fatalf("Parse = %+v, %v", claims, err)
	}
	key, _ := m.Create("image-updater", 0, "token-id-1")
	if claims, err := m.Parse(key); err != nil || claims.ID != "token-id-1" || claims.ExpiresAt != nil {
		t.Errorf("an API key without expiry: %+v, %v", claims, err)
	}

	c.t = c.t.Add(2 * time.Hour)
	if _, err := m.Parse(tok); !errors.Is(err, ErrExpiredSession) {
		t.Errorf("an expired session: %v", err)
	}
	if _, err := m.Parse(key); err != nil {
		t.Errorf("an API key without expiry stopped working: %v", err)
	}

	other, _ := newManager(t, "another-key")
	if _, err := other.Parse(key); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token signed with another key: %v", err)
	}
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Issuer: Issuer, Subject: "admin"})
	unsigned, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := m.Parse(unsigned); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("an unsigned token: %v", err)
	}
	foreign, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Issuer: "someone-else", Subject: "admin"}).SignedString([]byte("server-secret-key"))
	if _, err := m.Parse(foreign); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("a token of another issuer: %v", err)
	}
	if _, err := m.Parse(strings.Repeat("x", 20)); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("garbage: %v", err)
	}
	if _, err := NewManager(nil); err == nil {
		t.Error("a Manager without a key")
	}
}

func TestLoginsAreRateLimited(t *testing.T) {
	m, c := newManager(t, "k")
	hash, _ := bcrypt.GenerateFromPassword([]byte("right"), bcrypt.MinCost)
	if err := m.VerifyPassword("admin", "right", hash); err != nil {
		t.Fatal(err)
	}
	if err := m.VerifyPassword("nobody", "right", nil); !errors.Is(err, ErrInvalidLogin) {
		t.Errorf("an unknown user: %v", err)
	}
	for range DefaultMaxFailures {
		if err := m.VerifyPassword("admin", "wrong", hash); !errors.Is(err, ErrInvalidLogin) {
			t.Fatalf("a wrong password: %v", err)
		}
	}
	if err := m.VerifyPassword("admin", "right", hash); !errors.Is(err, ErrTooManyLogins) {
		t.Errorf("after %d failures the right password: %v, want refused", DefaultMaxFailures, err)
	}
	if err := m.VerifyPassword("alice", "wrong", hash); !errors.Is(err, ErrInvalidLogin) {
		t.Errorf("another user is not locked out: %v", err)
	}
	c.t = c.t.Add(DefaultFailureWindow + time.Second)
	if err := m.VerifyPassword("admin", "right", hash); err != nil {
		t.Errorf("after the window the right password: %v", err)
	}
}

func TestLoginInputsAreBounded(t *testing.T) {
	m, _ := newManager(t, "k")
	m.MaxTracked = 10
	hash, _ := bcrypt.GenerateFromPassword([]byte("right"), bcrypt.MinCost)
	if err := m.VerifyPassword(strings.Repeat("u", MaxUsernameLength+1), "x", nil); !errors.Is(err, ErrUsernameTooLong) {
		t.Errorf("a long user name: %v", err)
	}
	if err := m.VerifyPassword("admin", "", hash); !errors.Is(err, ErrBlankPassword) {
		t.Errorf("a blank password: %v", err)
	}
	if err := m.VerifyPassword("nobody", strings.Repeat("p", 1<<20), nil); !errors.Is(err, ErrInvalidLogin) {
		t.Errorf("a 1 MB password: %v", err)
	}
	// admin's failures survive a flood of made-up names that fills the table.
	for range DefaultMaxFailures {
		_ = m.VerifyPassword("admin", "wrong", hash)
	}
	for i := range 3 * m.MaxTracked {
		m.fail(fmt.Sprintf("user-%d", i)) // what a failed login of each records
	}
	m.mu.Lock()
	tracked := len(m.failures)
	m.mu.Unlock()
	if tracked > m.MaxTracked {
		t.Errorf("%d users' failures remembered, want at most %d", tracked, m.MaxTracked)
	}
	if err := m.VerifyPassword("admin", "right", hash); !errors.Is(err, ErrTooManyLogins) {
		t.Errorf("admin after the flood: %v, want still locked out", err)
	}
}

// TestTokensAllowForClockSkew checks a token issued by a replica whose
// clock runs ahead (or behind) by less than ClockSkew is accepted, and
// one far off is not.
func TestTokensAllowForClockSkew(t *testing.T) {
	issuer, issuerClock := newManager(t, "k")
	checker, checkerClock := newManager(t, "k")
	for _, tc := range []struct {
		skew time.Duration
		ok   bool
	}{{30 * time.Second, true}, {-30 * time.Second, true}, {ClockSkew + time.Minute, false}} {
		issuerClock.t = checkerClock.t.Add(tc.skew)
		tok, err := issuer.Create("admin", time.Hour, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checker.Parse(tok); (err == nil) != tc.ok {
			t.Errorf("issued %s off: %v, want ok=%v", tc.skew, err, tc.ok)
		}
	}
	// An expired token is refused once the skew allowance has passed.
	tok, _ := issuer.Create("admin", time.Minute, "")
	checkerClock.t = issuerClock.t.Add(time.Minute + ClockSkew + time.Second)
	if _, err := checker.Parse(tok); !errors.Is(err, ErrExpiredSession) {
		t.Errorf("expired token: %v", err)
	}
}
