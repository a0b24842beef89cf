package settings

import (
	"context"
	"errors"
	"testing"

	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/testing/hostkey"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// serverCert returns a PEM certificate for host.
func serverCert(t *testing.T, host string) []byte {
	t.Helper()
	cert, _, err := certs.SelfSigned("capstan-server", []string{host})
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// hostKey returns an SSH host key's type and base64 data, as in known_hosts.
func hostKey(t *testing.T) (string, []byte) {
	keyType, data := hostkey.New(t)
	return keyType, []byte(data)
}

func TestCertificatesRoundTrip(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	ctx := context.Background()
	keyType, keyData := hostKey(t)
	tlsData := serverCert(t, "git.example.com")
	created, err := AddCertificates(ctx, c, ns, []Certificate{
		{ServerName: "git.example.com", CertType: CertTypeHTTPS, CertData: tlsData},
		{ServerName: "[git.example.com]:2222", CertType: CertTypeSSH, CertSubType: keyType, CertData: keyData},
	}, false)
	if err != nil || len(created) != 2 {
		t.Fatalf("add: %v, %+v", err, created)
	}
	// The repository client trusts what was added.
	creds, err := (&RepoCredentials{Reader: c, Namespace: ns}).ForRepo(ctx, "https://git.example.com/team/app.git", "")
	if err != nil || string(creds.CAData) != string(tlsData) {
		t.Fatalf("the repository's trusted CA is %q (%v)", creds.CAData, err)
	}

	for _, tc := range []struct {
		sel  CertSelector
		want int
	}{
		{CertSelector{}, 2},
		{CertSelector{CertType: "ssh"}, 1},
		{CertSelector{CertType: "tls"}, 1},
		{CertSelector{HostNamePattern: "*.example.com"}, 1},
		{CertSelector{HostNamePattern: "other.*"}, 0},
		{CertSelector{CertType: "ssh", CertSubType: "ssh-rsa"}, 0},
	} {
		got, err := Certificates(ctx, c, ns, tc.sel)
		if err != nil || len(got) != tc.want {
			t.Errorf("%+v: %d certificates (%v), want %d: %+v", tc.sel, len(got), err, tc.want, got)
		}
	}
	got, _ := Certificates(ctx, c, ns, CertSelector{CertType: "https"})
	if len(got) == 1 && (got[0].CertInfo != "CN=capstan-server,O=Capstan" || got[0].CertSubType != "ecdsa") {
		t.Errorf("TLS certificate listed as %+v", got[0])
	}

	// The same data again is no change; other data needs upsert.
	if again, err := AddCertificates(ctx, c, ns, []Certificate{{ServerName: "git.example.com", CertType: CertTypeHTTPS, CertData: tlsData}}, false); err != nil || len(again) != 0 {
		t.Errorf("adding the same certificate: %v, %+v", err, again)
	}
	other := serverCert(t, "git.example.com")
	if _, err := AddCertificates(ctx, c, ns, []Certificate{{ServerName: "git.example.com", CertType: CertTypeHTTPS, CertData: other}}, false); !errors.Is(err, ErrCertificateExists) {
		t.Errorf("replacing without upsert: %v", err)
	}
	if _, err := AddCertificates(ctx, c, ns, []Certificate{{ServerName: "git.example.com", CertType: CertTypeHTTPS, CertData: other}}, true); err != nil {
		t.Errorf("replacing with upsert: %v", err)
	}

	removed, err := RemoveCertificates(ctx, c, ns, CertSelector{HostNamePattern: "[git.example.com]:2222", CertType: "ssh"})
	if err != nil || len(removed) != 1 {
		t.Errorf("remove: %v, %+v", err, removed)
	}
	if left, _ := Certificates(ctx, c, ns, CertSelector{}); len(left) != 1 || left[0].CertType != CertTypeHTTPS {
		t.Errorf("left after removing the SSH key: %+v", left)
	}
}

func TestAddCertificatesRefusesBadInput(t *testing.T) {
	localcluster.Need(t)
	c, ns := setup(t)
	keyType, keyData := hostKey(t)
	for name, cert := range map[string]Certificate{
		"bad host":     {ServerName: "-x.example.com", CertType: CertTypeHTTPS, CertData: serverCert(t, "x")},
		"option-like":  {ServerName: "--upload-pack=touch", CertType: CertTypeSSH, CertSubType: keyType, CertData: keyData},
		"no PEM":       {ServerName: "git.example.com", CertType: CertTypeHTTPS, CertData: []byte("not a certificate")},
		"bad key":      {ServerName: "git.example.com", CertType: CertTypeSSH, CertSubType: keyType, CertData: []byte("!!!")},
		"unknown type": {ServerName: "git.example.com", CertType: "gpg"},
	} {
		if _, err := AddCertificates(context.Background(), c, ns, []Certificate{cert}, true); !errors.Is(err, ErrInvalidCertificate) {
			t.Errorf("%s: %v, want an invalid certificate error", name, err)
		}
	}
	if got, _ := Certificates(context.Background(), c, ns, CertSelector{}); len(got) != 0 {
		t.Errorf("refused certificates were stored: %+v", got)
	}
}
