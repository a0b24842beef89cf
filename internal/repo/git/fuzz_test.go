package git

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzValidateURL checks that whatever ValidateURL accepts git cannot read
// as an option or a remote helper, and that the URL helpers never panic.
func FuzzValidateURL(f *testing.F) {
	for _, seed := range []string{
		"https://github.com/org/repo.git", "git@github.com:org/repo.git", "ssh://git@host:22/r", "file:///srv/r.git",
		"--upload-pack=touch /tmp/x", "-c core.sshCommand=x", "ext::sh -c x", "https://user:pass@host/r",
		"git@-oProxyCommand=x:r", "ssh://-x/r", "fd::3", "http://[::1]:80/r", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_ = NormalizeURL(raw)
		_ = RedactURL(raw)
		if ValidateURL(raw) != nil {
			return
		}
		if strings.HasPrefix(raw, "-") || helperURL.MatchString(raw) || strings.ContainsAny(raw, " \t\n\r\x00") {
			t.Fatalf("accepted %q", raw)
		}
		if strings.Contains(raw, "://") {
			u, err := url.Parse(raw)
			if err != nil || !allowedScheme(u.Scheme) || strings.HasPrefix(u.Host, "-") {
				t.Fatalf("accepted %q (scheme %v, err %v)", raw, u, err)
			}
		}
	})
}

// FuzzValidateRefName checks that an accepted ref name can never be read
// as an option or change a refspec.
func FuzzValidateRefName(f *testing.F) {
	for _, seed := range []string{"main", "feature/x", "--output=x", "a:b", "a..b", "+refs/heads/*", "v1.0.0", "@{-1}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateRefName(name) != nil {
			return
		}
		if strings.HasPrefix(name, "-") || strings.ContainsAny(name, ": *?[\\^~\x00") || strings.Contains(name, "..") {
			t.Fatalf("accepted %q", name)
		}
	})
}

// FuzzParseLsRemote feeds ls-remote output a server controls.
func FuzzParseLsRemote(f *testing.F) {
	f.Add("ref: refs/heads/main\tHEAD\n0123456789abcdef0123456789abcdef01234567\tHEAD\n0123456789abcdef0123456789abcdef01234567\trefs/tags/v1^{}\n")
	f.Fuzz(func(t *testing.T, out string) {
		refs := parseLsRemote([]byte(out))
		_, _ = refs.Resolve("main")
		_, _ = refs.Resolve("")
	})
}
