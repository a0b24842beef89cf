package config

import (
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistryCertificateAuthorities: ca_data, ca_file and the mounted
// file of the registry's host each make the registry trusted; a bad one
// is refused naming the registry; insecure verifies nothing.
func TestRegistryCertificateAuthorities(t *testing.T) {
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	cert := srv.Certificate()
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	indent := "    " + strings.ReplaceAll(strings.TrimSpace(caPEM), "\n", "\n    ")
	trusts := func(regs []Registry, host string) bool {
		cfg := TLS(regs, host)
		if cfg == nil || cfg.RootCAs == nil {
			return false
		}
		_, err := cert.Verify(x509.VerifyOptions{Roots: cfg.RootCAs, DNSName: "example.com"})
		return err == nil
	}
	for name, conf := range map[string]string{
		"ca_data": "registries:\n- name: r\n  prefix: r.example:5000\n  api_url: https://r.example:5000\n  ca_data: |\n" + indent + "\n",
		"ca_file": "registries:\n- name: r\n  prefix: r.example:5000\n  api_url: https://r.example:5000\n  ca_file: " + caFile + "\n",
	} {
		regs, err := ParseRegistries(conf)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !trusts(regs, "r.example:5000") {
			t.Errorf("%s: the registry's certificate is not trusted", name)
		}
		if TLS(regs, "other.example") != nil {
			t.Errorf("%s: another registry got a TLS configuration", name)
		}
	}

	// Argo CD's argocd-tls-certs-cm, mounted a file per host.
	defer func(old string) { TLSCertsDir = old }(TLSCertsDir)
	TLSCertsDir = dir
	if err := os.WriteFile(filepath.Join(dir, "mounted.example"), []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	regs, err := ParseRegistries("registries:\n- name: m\n  prefix: mounted.example\n  api_url: https://mounted.example\n")
	if err != nil || !trusts(regs, "mounted.example") {
		t.Errorf("the mounted certificate of the registry's host: %v", err)
	}

	regs, err = ParseRegistries("registries:\n- name: i\n  prefix: i.example\n  api_url: https://i.example\n  insecure: yes\n  ca_file: /nowhere\n")
	if cfg := TLS(regs, "i.example"); err != nil || cfg == nil || !cfg.InsecureSkipVerify {
		t.Errorf("insecure: %+v %v", cfg, err)
	}

	for conf, want := range map[string]string{
		"registries:\n- name: bad\n  prefix: b.example\n  ca_data: not a certificate\n":                "registry bad: ca_data",
		"registries:\n- name: gone\n  prefix: g.example\n  ca_file: " + dir + "/missing.pem\n":         "registry gone: ca_file",
		"registries:\n- name: dir\n  prefix: d.example\n  ca_file: " + dir + "\n":                      "is not a regular file",
		"registries:\n- name: junk\n  prefix: j.example\n  ca_file: " + filepath.Join(dir, "x") + "\n": "registry junk: ca_file",
	} {
		if strings.Contains(conf, "/x\n") {
			if err := os.WriteFile(filepath.Join(dir, "x"), []byte("no PEM here"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ParseRegistries(conf); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", conf, err, want)
		}
	}
}
