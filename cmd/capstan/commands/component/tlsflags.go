package component

import (
	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/certs"
)

// addTLSPolicyFlags adds Argo CD's TLS flags of a server (prefix, if
// any, before each name) and returns the policy they fill.
func addTLSPolicyFlags(cmd *cobra.Command, prefix string) *certs.TLSPolicy {
	p := &certs.TLSPolicy{}
	cmd.Flags().StringVar(&p.MinVersion, prefix+"tlsminversion", "1.2", "lowest TLS version accepted: 1.0, 1.1, 1.2 or 1.3")
	cmd.Flags().StringVar(&p.MaxVersion, prefix+"tlsmaxversion", "1.3", "highest TLS version accepted: 1.0, 1.1, 1.2 or 1.3")
	cmd.Flags().StringVar(&p.Ciphers, prefix+"tlsciphers", "", "TLS 1.2 cipher suites accepted, by Go's names, colon-separated (default: Go's secure ones)")
	cmd.Flags().StringVar(&p.Curves, prefix+"tlscurvepreferences", "", "key exchange groups offered, in order of preference, colon-separated (e.g. X25519:CurveP256; default: Go's)")
	return p
}
