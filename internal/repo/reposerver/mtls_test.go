package reposerver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/testing/gitserver"
)

// testCA is a certificate authority made for a test, which signs client
// certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	writePEM(t, filepath.Join(dir, name+".crt"), "CERTIFICATE", der)
	return &testCA{cert: cert, key: key}
}

// client writes a client certificate the CA signed, and its key, into
// dir as <name>.crt and <name>.key.
func (ca *testCA) client(t *testing.T, dir, name string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writePEM(t, certPath, "CERTIFICATE", der)
	writePEM(t, keyPath, "EC PRIVATE KEY", keyDER)
	return certPath, keyPath
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMutualTLS: a repo server given a client CA (--client-ca-path)
// serves only clients that show a certificate it signed: a component
// without one, or with one of another authority, is refused; without the
// CA's file, clients are asked for none, as in Argo CD.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "client-ca")
	other := newTestCA(t, dir, "other-ca")
	goodCert, goodKey := ca.client(t, dir, "controller")
	badCert, badKey := other.client(t, dir, "stranger")
	remote := gitserver.NewLocalRepo(t)
	sha := remote.Commit(t, "c", map[string]string{"a.yaml": "a: 1\n"})
	svc := repo.NewService(repo.Options{Root: t.TempDir()})

	serveWith := func(clientCAPath string) string {
		cert, _, err := certs.Load(t.TempDir(), "argocd-repo-server", Hosts("argocd"))
		if err != nil {
			t.Fatal(err)
		}
		creds, err := ServerOption(cert, certs.TLSPolicy{}, clientCAPath)
		if err != nil {
			t.Fatal(err)
		}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer(creds)
		Register(srv, svc)
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		return lis.Addr().String()
	}
	resolve := func(addr string, tlsOpts ClientTLS) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		got, err := dial(t, addr, tlsOpts).Resolve(ctx, &repo.ResolveRequest{RepoURL: remote.URL, Revision: "HEAD"})
		if err == nil && got.Revision != sha {
			t.Errorf("resolved %s, want %s", got.Revision, sha)
		}
		return err
	}

	mutual := serveWith(filepath.Join(dir, "client-ca.crt"))
	for _, tc := range []struct {
		name   string
		client ClientTLS
		ok     bool
	}{
		{"no client certificate", ClientTLS{}, false},
		{"a certificate of another authority", ClientTLS{ClientCertPath: badCert, ClientKeyPath: badKey}, false},
		{"a certificate the client CA signed", ClientTLS{ClientCertPath: goodCert, ClientKeyPath: goodKey}, true},
		{"a certificate path with no file (none shown)", ClientTLS{ClientCertPath: filepath.Join(dir, "absent.crt"), ClientKeyPath: goodKey}, false},
	} {
		if err := resolve(mutual, tc.client); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if err := resolve(serveWith(filepath.Join(dir, "absent-ca.crt")), ClientTLS{}); err != nil {
		t.Errorf("without a client CA file, a client without a certificate: %v", err)
	}
	if _, err := ServerOption(certsFor(t), certs.TLSPolicy{}, filepath.Join(dir, "controller.key")); err == nil {
		t.Error("a client CA file holding no certificate was accepted")
	}
}

func certsFor(t *testing.T) tls.Certificate {
	t.Helper()
	c, _, err := certs.Load(t.TempDir(), "argocd-repo-server", Hosts("argocd"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
