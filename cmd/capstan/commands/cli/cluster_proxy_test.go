package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestServerProxyURL: cluster add registers --proxy-url as the proxy the
// server reaches the cluster through, unless --server-proxy-url names
// another, or none with "", as in Argo CD 3.6; a URL that is not a proxy's
// is refused.
func TestServerProxyURL(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, server string
		set          bool
		want, err    string
	}{
		{"only --proxy-url", "", false, "http://client-proxy:3128", ""},
		{"another for the server", "socks5://server-proxy:1080", true, "socks5://server-proxy:1080", ""},
		{"none for the server", "", true, "", ""},
		{"not a proxy URL", "ftp://x", true, "", "--server-proxy-url"},
	} {
		o := &clusterAddFlags{kubeconfig: kubeconfig, endpoint: "kubeconfig", bearerToken: "t", proxyURL: "http://client-proxy:3128", shard: -1}
		cmd := &cobra.Command{}
		cmd.Flags().StringVar(&o.serverProxyURL, "server-proxy-url", "", "")
		if tc.set {
			if err := cmd.Flags().Set("server-proxy-url", tc.server); err != nil {
				t.Fatal(err)
			}
		}
		spec, err := o.spec(cmd, "c")
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error about %s", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case spec.Config.ProxyURL != tc.want:
			t.Errorf("%s: the server's proxy is %q, want %q", tc.name, spec.Config.ProxyURL, tc.want)
		}
	}
}
