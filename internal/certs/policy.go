package certs

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// TLSPolicy is what a TLS server accepts, as Argo CD's --tlsminversion,
// --tlsmaxversion and --tlsciphers (argocd-cmd-params-cm's
// server.tls.* and reposerver.tls.*) say it.
type TLSPolicy struct {
	// MinVersion and MaxVersion are "1.0", "1.1", "1.2" or "1.3".
	// Default "1.2" and "1.3", as in Argo CD.
	MinVersion, MaxVersion string
	// Ciphers are the TLS 1.2 (and older) cipher suites allowed, by Go's
	// names, colon-separated; TLS 1.3's are not configurable. Default
	// "": Go's secure defaults (Argo CD's default names one RSA suite,
	// which Capstan's own ECDSA certificates could not use).
	Ciphers string
}

// tlsVersions are the versions a policy names.
var tlsVersions = map[string]uint16{"1.0": tls.VersionTLS10, "1.1": tls.VersionTLS11, "1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

// Apply sets the policy's versions and cipher suites on cfg, or says
// which value is wrong.
func (p TLSPolicy) Apply(cfg *tls.Config) error {
	lowest, err := tlsVersion("minimum", p.MinVersion, "1.2")
	if err != nil {
		return err
	}
	highest, err := tlsVersion("maximum", p.MaxVersion, "1.3")
	if err != nil {
		return err
	}
	if lowest > highest {
		return fmt.Errorf("minimum TLS version %s must not be higher than maximum TLS version %s", p.MinVersion, p.MaxVersion)
	}
	var suites []uint16
	if p.Ciphers != "" && lowest < tls.VersionTLS13 {
		byName := map[string]uint16{}
		for _, s := range tls.CipherSuites() {
			byName[s.Name] = s.ID
		}
		for name := range strings.SplitSeq(p.Ciphers, ":") {
			id, ok := byName[strings.TrimSpace(name)]
			if !ok {
				return fmt.Errorf("invalid cipher suite specified: %s", name)
			}
			suites = append(suites, id)
		}
	}
	cfg.MinVersion, cfg.MaxVersion, cfg.CipherSuites = lowest, highest, suites
	return nil
}

func tlsVersion(which, v, def string) (uint16, error) {
	if v == "" {
		v = def
	}
	id, ok := tlsVersions[v]
	if !ok {
		return 0, fmt.Errorf("%s TLS version %q: use 1.0, 1.1, 1.2 or 1.3", which, v)
	}
	return id, nil
}
