package certs

import (
	"crypto/tls"
	"strings"
	"testing"
)

func TestTLSPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy        TLSPolicy
		lowest, upper uint16
		suites        int
		err           string
	}{
		{TLSPolicy{}, tls.VersionTLS12, tls.VersionTLS13, 0, ""},
		{TLSPolicy{MinVersion: "1.3"}, tls.VersionTLS13, tls.VersionTLS13, 0, ""},
		{TLSPolicy{MinVersion: "1.2", MaxVersion: "1.2", Ciphers: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}, tls.VersionTLS12, tls.VersionTLS12, 2, ""},
		{TLSPolicy{MinVersion: "1.3", Ciphers: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}, tls.VersionTLS13, tls.VersionTLS13, 0, ""}, // 1.3's are fixed
		{TLSPolicy{MinVersion: "1.3", MaxVersion: "1.2"}, 0, 0, 0, "must not be higher"},
		{TLSPolicy{MinVersion: "2.0"}, 0, 0, 0, `minimum TLS version "2.0"`},
		{TLSPolicy{Ciphers: "TLS_MADE_UP"}, 0, 0, 0, "invalid cipher suite specified: TLS_MADE_UP"},
	} {
		cfg := &tls.Config{}
		err := tc.policy.Apply(cfg)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: %v, want %q", tc.policy, err, tc.err)
		case tc.err == "" && (err != nil || cfg.MinVersion != tc.lowest || cfg.MaxVersion != tc.upper || len(cfg.CipherSuites) != tc.suites):
			t.Errorf("%+v: %x-%x %d suites, %v", tc.policy, cfg.MinVersion, cfg.MaxVersion, len(cfg.CipherSuites), err)
		}
	}
}
