package certs

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A component without mounted certificate files serves with a
// self-signed certificate for its names.
func ExampleLoad() {
	cert, generated, err := Load("/nonexistent", "argocd-repo-server", []string{"argocd-repo-server", "argocd-repo-server.argocd.svc"})
	if err != nil {
		panic(err)
	}
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	fmt.Println(generated, leaf.Subject.CommonName, leaf.DNSNames)
	// Output: true argocd-repo-server [argocd-repo-server argocd-repo-server.argocd.svc]
}

func TestLoad(t *testing.T) {
	cert, key, err := SelfSigned("mounted", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := SelfSigned("other", nil)
	for _, tc := range []struct {
		name          string
		files         map[string][]byte
		wantGenerated bool
		wantErr       string
	}{
		{"no files: self-signed", nil, true, ""},
		{"the mounted pair", map[string][]byte{CertFile: cert, KeyFile: key}, false, ""},
		{"a certificate without its key", map[string][]byte{CertFile: cert}, false, "tls.key"},
		{"a key that does not match", map[string][]byte{CertFile: cert, KeyFile: otherKey}, false, "do not make a certificate"},
		{"a file too large to be a certificate", map[string][]byte{CertFile: make([]byte, maxPEM+1), KeyFile: key}, false, "more than a certificate file may hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, generated, err := Load(dir, "argocd-repo-server", nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || generated != tc.wantGenerated {
				t.Fatalf("generated %v, err %v; want generated %v", generated, err, tc.wantGenerated)
			}
		})
	}
}

func TestPool(t *testing.T) {
	cert, _, err := SelfSigned("server", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ca, _, _ := SelfSigned("ca", nil)
	for _, tc := range []struct {
		name    string
		files   map[string][]byte
		wantErr bool
	}{
		{"ca.crt", map[string][]byte{CAFile: ca, CertFile: cert}, false},
		{"the server's own certificate", map[string][]byte{CertFile: cert}, false},
		{"nothing to trust", nil, true},
		{"no PEM in ca.crt", map[string][]byte{CAFile: []byte("not a certificate")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Pool(dir); (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
