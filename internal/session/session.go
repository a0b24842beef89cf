// Package session issues and checks the API server's tokens: session
// tokens after a login and API keys of local accounts, both JWTs signed
// with argocd-secret's server.secretkey (HS256, issuer "argocd"), as Argo
// CD's are, so its CLI and UI accept them. It also verifies passwords and
// slows down guessing: after MaxFailures failed logins of one user within
// FailureWindow, further attempts are refused until the window passes.
package session

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// Issuer is the iss claim of every token.
const Issuer = "argocd"

// Defaults as Argo CD's (ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT,
// ARGOCD_SESSION_FAILURE_WINDOW_SECONDS and ARGOCD_SESSION_MAX_CACHE_SIZE).
const (
	DefaultMaxFailures   = 5
	DefaultFailureWindow = 300 * time.Second
	DefaultMaxTracked    = 10000
)

// ClockSkew is how far apart the clocks of the API servers that issue and
// check a token may be: a token is valid from ClockSkew before it was
// issued to ClockSkew after it expires, so that replicas a few seconds
// apart accept each other's tokens.
const ClockSkew = time.Minute

// MaxUsernameLength bounds the user name of a login, as Argo CD's does, so
// that what is remembered of failed logins stays small.
const MaxUsernameLength = 32

// maxPasswordLength is bcrypt's limit: no stored password is longer, so a
// longer one is wrong without comparing it.
const maxPasswordLength = 72

// adminUser is never forgotten to make room for other users' failures.
const adminUser = "admin"

// Errors a caller maps to 401 Unauthenticated. The first two are Argo CD's
// messages, capitals and all.
var (
	//lint:ignore ST1005 Argo CD's message
	ErrInvalidLogin = errors.New("Invalid username or password")
	//lint:ignore ST1005 Argo CD's message
	ErrBlankPassword  = errors.New("Blank passwords are not allowed")
	ErrTooManyLogins  = errors.New("too many failed login attempts, try again later")
	ErrInvalidToken   = errors.New("invalid session token")
	ErrExpiredSession = errors.New("session expired")
	// ErrRevokedToken refuses a token logged out before it expired,
	// with Argo CD's message.
	ErrRevokedToken = errors.New("token is revoked, please re-login")
)

// ErrUsernameTooLong refuses a login whose user name is longer than
// MaxUsernameLength (a caller maps it to 400 InvalidArgument).
//
//lint:ignore ST1005 Argo CD's message
var ErrUsernameTooLong = fmt.Errorf("Username is too long (%d bytes max)", MaxUsernameLength)

// Claims are a token's claims. Subject is the account; ID (jti) names an
// API key so it can be listed and revoked.
type Claims = jwt.RegisteredClaims

// Manager signs and checks tokens and counts failed logins.
type Manager struct {
	key []byte
	// MaxFailures and FailureWindow bound password guessing.
	MaxFailures   int
	FailureWindow time.Duration
	// MaxTracked bounds how many users' failures are remembered; when it
	// is reached, another user's (never admin's) are forgotten.
	MaxTracked int
	now        func() time.Time

	mu       sync.Mutex
	failures map[string][]time.Time // by username
}

// NewManager returns a Manager signing with key (server.secretkey).
func NewManager(key []byte) (*Manager, error) {
	if len(key) == 0 {
		return nil, errors.New("no server.secretkey to sign sessions with")
	}
	return &Manager{key: key, MaxFailures: DefaultMaxFailures, FailureWindow: DefaultFailureWindow, MaxTracked: DefaultMaxTracked,
		now: time.Now, failures: map[string][]time.Time{}}, nil
}

// Create returns a token for subject, valid for ttl (0: no expiry, as API
// keys may be), with id as its jti (empty: none).
func (m *Manager) Create(subject string, ttl time.Duration, id string) (string, error) {
	now := m.now()
	c := Claims{Issuer: Issuer, Subject: subject, ID: id, IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now)}
	if ttl > 0 {
		c.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(m.key)
	if err != nil {
		return "", fmt.Errorf("signing a token for %s: %w", subject, err)
	}
	return signed, nil
}

// Parse checks a token's signature, issuer and times, and returns its claims.
func (m *Manager) Parse(token string) (*Claims, error) {
	c := &Claims{}
	_, err := jwt.ParseWithClaims(token, c, func(*jwt.Token) (any, error) { return m.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Name}), jwt.WithIssuer(Issuer), jwt.WithTimeFunc(m.now), jwt.WithLeeway(ClockSkew))
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, ErrExpiredSession
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return c, nil
}

// VerifyPassword checks password against the user's bcrypt hash (nil hash:
// no such user or no password), counting failures. Every failure costs a
// bcrypt comparison, so unknown users cannot be told from wrong passwords
// by timing.
func (m *Manager) VerifyPassword(username, password string, hash []byte) error {
	if len(username) > MaxUsernameLength {
		return ErrUsernameTooLong
	}
	if password == "" {
		return ErrBlankPassword
	}
	if m.locked(username) {
		return ErrTooManyLogins
	}
	if len(password) > maxPasswordLength {
		m.fail(username)
		return ErrInvalidLogin
	}
	known := hash != nil
	if !known {
		hash = unknownUserHash()
	}
	if err := bcrypt.CompareHashAndPassword(hash, []byte(password)); err != nil || !known {
		m.fail(username)
		return ErrInvalidLogin
	}
	m.mu.Lock()
	delete(m.failures, username)
	m.mu.Unlock()
	return nil
}

// unknownUserHash is compared against when a user has no password, so
// that a login takes as long either way. Made on first use: bcrypt takes
// tens of milliseconds, which every start of the program (each CLI
// command, render worker and Git credential helper) would pay.
var unknownUserHash = sync.OnceValue(func() []byte {
	hash, _ := bcrypt.GenerateFromPassword([]byte("no user has this password"), bcrypt.DefaultCost)
	return hash
})

func (m *Manager) recent(username string) []time.Time {
	cutoff := m.now().Add(-m.FailureWindow)
	kept := m.failures[username][:0]
	for _, t := range m.failures[username] {
		if t.After(cutoff) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		delete(m.failures, username)
		return nil
	}
	m.failures[username] = kept
	return kept
}

func (m *Manager) locked(username string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recent(username)) >= m.MaxFailures
}

func (m *Manager) fail(username string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, tracked := m.failures[username]; !tracked && len(m.failures) >= m.MaxTracked {
		m.makeRoom(username)
	}
	m.failures[username] = append(m.recent(username), m.now())
}

// makeRoom forgets expired failures, then, if still full, one other
// user's (never admin's): a flood of made-up names cannot grow the map,
// nor reset the count of the account that matters most.
func (m *Manager) makeRoom(username string) {
	for u := range m.failures {
		m.recent(u) // drops u when all its failures are old
	}
	for u := range m.failures { // map order is random
		if len(m.failures) < m.MaxTracked {
			return
		}
		if u != adminUser && u != username {
			delete(m.failures, u)
		}
	}
}
