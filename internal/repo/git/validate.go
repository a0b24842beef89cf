package git

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/capstan-cd/capstan/internal/safetext"
)

// ErrInvalidURL means a repository URL is not one Capstan hands to git:
// not a URL with an allowed scheme nor an scp-style address, or shaped so
// that git could read it as an option or a remote-helper command.
var ErrInvalidURL = errors.New("invalid repository URL")

// ErrInvalidRef means a branch or tag name is not a valid Git ref name.
var ErrInvalidRef = errors.New("invalid ref name")

// AllowedSchemes are the URL schemes git may be pointed at. Every other
// transport, remote helpers such as ext:: and fd:: above all, is refused
// here and again by git itself (GIT_ALLOW_PROTOCOL in every command's
// environment).
var AllowedSchemes = []string{"https", "http", "ssh", "git", "file"}

// allowProtocol is GIT_ALLOW_PROTOCOL: git refuses any other transport,
// including through redirects and submodules.
var allowProtocol = strings.Join(AllowedSchemes, ":")

// maxURLLength bounds a repository URL; real ones are far shorter.
const maxURLLength = 2048

var (
	// helperURL is git's "<transport>::<address>" remote-helper syntax.
	helperURL = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9+.-]*::`)
	// scpLike is git's "[user@]host:path" SSH address.
	scpLike = regexp.MustCompile(`^(?:([A-Za-z0-9._~-]+)@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(.*)$`)
)

// ValidateURL checks that raw is a repository URL git can only read as a
// repository: a URL whose scheme is one of AllowedSchemes and whose host
// (and user) cannot be taken for an option, or an scp-style SSH address
// ("git@github.com:org/repo.git"). Anything starting with "-", holding
// control characters or whitespace, or naming a remote helper is refused.
func ValidateURL(raw string) error {
	invalid := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidURL, RedactURL(safetext.Truncate(raw, 200)), why)
	}
	switch {
	case raw == "":
		return invalid("empty")
	case len(raw) > maxURLLength:
		return invalid(fmt.Sprintf("longer than %d characters", maxURLLength))
	case strings.HasPrefix(raw, "-"):
		return invalid("it starts with '-'")
	case strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return invalid("it holds whitespace or control characters")
	case helperURL.MatchString(raw):
		return invalid("remote helper transports (such as ext::) are not allowed")
	}
	if !strings.Contains(raw, "://") {
		m := scpLike.FindStringSubmatch(raw)
		if m == nil || strings.Contains(m[2], "/") {
			return invalid("want a URL (" + strings.Join(AllowedSchemes, ", ") + ") or user@host:path")
		}
		if strings.HasPrefix(m[1], "-") || strings.HasPrefix(m[2], "-") || strings.HasPrefix(m[3], "-") {
			return invalid("a user, host or path may not start with '-'")
		}
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return invalid("it does not parse as a URL")
	}
	if !allowedScheme(u.Scheme) {
		return invalid(fmt.Sprintf("scheme %q is not one of %s", u.Scheme, strings.Join(AllowedSchemes, ", ")))
	}
	if u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return invalid("a file URL names no host")
		}
		if !strings.HasPrefix(u.Path, "/") {
			return invalid("a file URL needs an absolute path")
		}
		return nil
	}
	if u.Hostname() == "" {
		return invalid("no host")
	}
	if strings.HasPrefix(u.Host, "-") || (u.User != nil && strings.HasPrefix(u.User.Username(), "-")) {
		return invalid("a user or host may not start with '-'")
	}
	return nil
}

func allowedScheme(s string) bool {
	for _, a := range AllowedSchemes {
		if s == a {
			return true
		}
	}
	return false
}

// ValidateRefName checks a branch or tag name (without "refs/heads/") by
// git's check-ref-format rules, and refuses names git could read as an
// option or a refspec.
func ValidateRefName(name string) error {
	invalid := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidRef, safetext.Truncate(name, 200), why)
	}
	switch {
	case name == "":
		return invalid("empty")
	case len(name) > 255:
		return invalid("longer than 255 characters")
	case strings.HasPrefix(name, "-"):
		return invalid("it starts with '-'")
	case name == "@":
		return invalid("'@' alone is not a ref name")
	case strings.ContainsAny(name, " ~^:?*[\\"):
		return invalid(`it holds one of the characters space ~ ^ : ? * [ \`)
	case strings.IndexFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0:
		return invalid("it holds control characters")
	case strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//"):
		return invalid("it holds '..', '@{' or '//'")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return invalid("it starts or ends with '/' or ends with '.'")
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return invalid("a component starts with '.' or ends with '.lock'")
		}
	}
	return nil
}

// ValidateRevision checks an Application's targetRevision before it is
// looked up: empty and HEAD, a commit SHA, or a ref name. The revision
// itself never reaches git's command line (only a resolved, hexadecimal
// SHA does), but one that can never resolve is refused clearly.
func ValidateRevision(rev string) error {
	if rev == "" || rev == "HEAD" || shortSHA.MatchString(rev) || fullSHA.MatchString(rev) {
		return nil
	}
	if err := ValidateRefName(strings.TrimPrefix(rev, "refs/")); err != nil {
		// A semantic version constraint on tags is resolved from the
		// remote's refs and never given to git.
		if _, cerr := semver.NewConstraint(rev); cerr == nil && !strings.HasPrefix(rev, "-") && len(rev) <= 256 {
			return nil
		}
		return fmt.Errorf("invalid revision: %w", err)
	}
	return nil
}
