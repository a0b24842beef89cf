package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// identity is a user of the API server, authenticated by a static bearer token.
type identity struct {
	user   string
	groups []string
	token  string
}

// The identities every cluster has. The admin is what callers get; the
// components run as themselves so their requests are told apart in logs.
// kube-controller-manager and kwok need broad rights and get system:masters.
var identityNames = []struct {
	name   string
	user   string
	groups []string
}{
	{"admin", "capstan-admin", []string{"system:masters"}},
	{"kube-controller-manager", "system:kube-controller-manager", []string{"system:masters"}},
	{"kube-scheduler", "system:kube-scheduler", nil},
	{"kwok", "kwok", []string{"system:masters"}},
}

// pki is the cluster's certificate authority, serving certificate,
// service-account signing key and static tokens, written under dir.
type pki struct {
	dir        string
	caPEM      []byte
	certFile   string
	keyFile    string
	caFile     string
	saKeyFile  string
	saPubFile  string
	tokenFile  string
	identities map[string]identity
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		dir:        dir,
		certFile:   filepath.Join(dir, "apiserver.crt"),
		keyFile:    filepath.Join(dir, "apiserver.key"),
		caFile:     filepath.Join(dir, "ca.crt"),
		saKeyFile:  filepath.Join(dir, "sa.key"),
		saPubFile:  filepath.Join(dir, "sa.pub"),
		tokenFile:  filepath.Join(dir, "tokens.csv"),
		identities: map[string]identity{},
	}

	caKey, caCert, err := newCA()
	if err != nil {
		return nil, fmt.Errorf("creating CA: %w", err)
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caCert.Raw})
	if err := os.WriteFile(p.caFile, p.caPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeServingCert(p.certFile, p.keyFile, caKey, caCert); err != nil {
		return nil, fmt.Errorf("creating serving certificate: %w", err)
	}
	if err := writeKeyPair(p.saKeyFile, p.saPubFile); err != nil {
		return nil, fmt.Errorf("creating service-account key: %w", err)
	}

	var tokens strings.Builder
	for _, id := range identityNames {
		tok, err := randomToken()
		if err != nil {
			return nil, err
		}
		p.identities[id.name] = identity{user: id.user, groups: id.groups, token: tok}
		fmt.Fprintf(&tokens, "%s,%s,%s,%q\n", tok, id.user, id.user, strings.Join(id.groups, ","))
	}
	if err := os.WriteFile(p.tokenFile, []byte(tokens.String()), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "capstan-local-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func writeServingCert(certFile, keyFile string, caKey *ecdsa.PrivateKey, ca *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceIP)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return writePrivateKey(keyFile, key)
}

func writeKeyPair(keyFile, pubFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writePrivateKey(keyFile, key); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func writePrivateKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
