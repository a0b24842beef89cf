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
	// Curves are the key exchange groups offered, in order of
	// preference, colon-separated: Go's names (X25519, CurveP256,
	// X25519MLKEM768, ...), or P256 and P-256 for the NIST curves.
	// Default "": Go's defaults, post-quantum hybrid first.
	Curves string
}

// curveIDs are the key exchange groups a policy may name.
var curveIDs = func() map[string]tls.CurveID {
	byName := map[string]tls.CurveID{}
	for _, id := range []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521,
		tls.X25519MLKEM768, tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024} {
		byName[id.String()] = id
	}
	for _, bits := range []string{"256", "384", "521"} {
		byName["P"+bits], byName["P-"+bits] = byName["CurveP"+bits], byName["CurveP"+bits]
	}
	return byName
}()

// curves reads p.Curves.
func (p TLSPolicy) curves() ([]tls.CurveID, error) {
	var out []tls.CurveID
	for name := range strings.SplitSeq(p.Curves, ":") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		id, ok := curveIDs[name]
		if !ok {
			return nil, fmt.Errorf("invalid TLS curve preference: %s", name)
		}
		out = append(out, id)
	}
	return out, nil
}

// tlsVersions are the versions a policy names.
var tlsVersions = map[string]uint16{"1.0": tls.VersionTLS10, "1.1": tls.VersionTLS11, "1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

// Apply sets the policy's versions, cipher suites and curves on cfg, or says
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
	curves, err := p.curves()
	if err != nil {
		return err
	}
	cfg.MinVersion, cfg.MaxVersion, cfg.CipherSuites, cfg.CurvePreferences = lowest, highest, suites, curves
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
