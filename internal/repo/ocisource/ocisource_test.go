package ocisource

import (
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/git"
)

// TestPlainHTTPScheme: a registry is reached over HTTPS unless the
// Client's options or the repository's credentials (a Secret's
// insecureOCIForceHttp) ask for plain HTTP.
func TestPlainHTTPScheme(t *testing.T) {
	for _, tc := range []struct {
		clientPlain, credsPlain bool
		want                    string
	}{
		{false, false, "https"},
		{false, true, "http"},
		{true, false, "http"},
	} {
		c := New(Options{Root: t.TempDir(), PlainHTTP: tc.clientPlain})
		repo, err := c.repository("oci://registry.example.com/org/manifests", git.Creds{PlainHTTP: tc.credsPlain})
		if err != nil {
			t.Fatal(err)
		}
		if got := repo.Registry.Scheme(); got != tc.want {
			t.Errorf("client %t, creds %t: %s, want %s", tc.clientPlain, tc.credsPlain, got, tc.want)
		}
	}
}
