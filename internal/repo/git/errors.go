package git

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// ErrAuthentication means the server refused the credentials (or asked for
// some and none were given).
var ErrAuthentication = errors.New("authentication failed")

// ErrRevisionNotFound means no branch, tag or commit matches a revision.
var ErrRevisionNotFound = errors.New("revision not found")

// ErrPushRejected means the remote refused a push because the branch
// moved on (or is being updated) since it was fetched.
var ErrPushRejected = errors.New("push rejected")

// ErrTooLarge means an object of the repository is larger than what its
// reader allows.
var ErrTooLarge = errors.New("object too large")

// ErrNeedsCheckout means a file of a commit cannot be read from the clone's
// objects alone: it is a symbolic link or a submodule, whose meaning only a
// checkout gives. Read the commit's Checkout instead.
var ErrNeedsCheckout = errors.New("needs a checkout")

// RedactURL removes any password or token from a repository URL.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		u.User = url.UserPassword(u.User.Username(), "redacted")
	}
	return u.String()
}

var userinfo = regexp.MustCompile(`(https?://[^:/@\s]+):[^@\s]+@`)

// redact removes credentials embedded in URLs anywhere in s.
func redact(s string) string {
	return userinfo.ReplaceAllString(s, "$1:redacted@")
}

// authFailureMarkers are what git prints when credentials are missing or wrong.
var authFailureMarkers = []string{
	"Authentication failed",
	"could not read Username",
	"could not read Password",
	"terminal prompts disabled",
	"HTTP Basic: Access denied",
	"The requested URL returned error: 401",
	"The requested URL returned error: 403",
	"Permission denied (publickey",
	"Host key verification failed",
}

func isAuthFailure(stderr string) bool {
	for _, m := range authFailureMarkers {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}

// isPushRejected reports whether git's output says the remote branch
// moved on under the push.
func isPushRejected(stderr string) bool {
	for _, m := range []string{"[rejected]", "non-fast-forward", "fetch first", "cannot lock ref", "failed to update ref"} {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}
