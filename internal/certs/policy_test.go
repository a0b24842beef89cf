package certs

import (
	"crypto/tls"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestTLSCurvePreferences: the curves named are the only ones a server
// agrees to, as Argo CD's --tlscurvepreferences; names are Go's or the
// short NIST ones, and a name Go does not know is refused.
func TestTLSCurvePreferences(t *testing.T) {
	certPEM, keyPEM, err := SelfSigned("localhost", []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	server := &tls.Config{Certificates: []tls.Certificate{cert}}
	if err := (TLSPolicy{Curves: "P-384 : CurveP521"}).Apply(server); err != nil {
		t.Fatal(err)
	}
	if want := []tls.CurveID{tls.CurveP384, tls.CurveP521}; !slices.Equal(server.CurvePreferences, want) {
		t.Fatalf("curves %v, want %v", server.CurvePreferences, want)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	handshake := func(client ...tls.CurveID) (tls.CurveID, error) {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(),
			&tls.Config{InsecureSkipVerify: true, CurvePreferences: client}) //nolint:gosec // a test handshake
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.ConnectionState().CurveID, nil
	}
	if _, err := handshake(tls.X25519); err == nil {
		t.Error("a client offering only X25519 was accepted")
	}
	if got, err := handshake(tls.X25519, tls.CurveP521); err != nil || got != tls.CurveP521 {
		t.Errorf("a client offering P-521: %v, %v", got, err)
	}
	if err := (TLSPolicy{Curves: "X25519:Curve25519-made-up"}).Apply(&tls.Config{}); err == nil ||
		!strings.Contains(err.Error(), "invalid TLS curve preference: Curve25519-made-up") {
		t.Errorf("an unknown curve: %v", err)
	}
}
