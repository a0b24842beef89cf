// Package certs makes and loads the TLS certificates Capstan's components
// serve with: a component whose certificate files are absent serves with a
// self-signed one made at start, as Argo CD's components do.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The file names a certificate directory holds, as in a mounted
// kubernetes.io/tls Secret (argocd-repo-server-tls, argocd-server-tls).
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// maxPEM bounds a certificate file read from disk.
const maxPEM = 1 << 20

// SelfSigned returns a PEM certificate and key for hosts (DNS names or IP
// addresses), valid for a year, with commonName as its subject.
func SelfSigned(commonName string, hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{"Capstan"}, CommonName: commonName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// Load returns the certificate in dir's tls.crt and tls.key; when neither
// file exists it returns a self-signed certificate for hosts instead, and
// generated reports so. One file without the other is an error, as is a
// pair that does not match.
func Load(dir, commonName string, hosts []string) (cert tls.Certificate, generated bool, err error) {
	certPEM, keyPEM, generated, err := LoadPEM(dir, commonName, hosts)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("%s and %s in %s do not make a certificate: %w", CertFile, KeyFile, dir, err)
	}
	return cert, generated, nil
}

// LoadPEM is Load for a program that wants the files' contents (Dex
// reads its certificate from files).
func LoadPEM(dir, commonName string, hosts []string) (certPEM, keyPEM []byte, generated bool, err error) {
	certPEM, certErr := readPEM(filepath.Join(dir, CertFile))
	keyPEM, keyErr := readPEM(filepath.Join(dir, KeyFile))
	switch {
	case errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist):
		certPEM, keyPEM, err = SelfSigned(commonName, hosts)
		return certPEM, keyPEM, err == nil, err
	case certErr != nil:
		return nil, nil, false, certErr
	case keyErr != nil:
		return nil, nil, false, keyErr
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, nil, false, fmt.Errorf("%s and %s in %s do not make a certificate: %w", CertFile, KeyFile, dir, err)
	}
	return certPEM, keyPEM, false, nil
}

// Pool returns the certificates a client trusts from dir: ca.crt, or the
// server's own tls.crt when there is no CA file (a self-signed certificate
// is its own authority).
func Pool(dir string) (*x509.CertPool, error) {
	data, err := readPEM(filepath.Join(dir, CAFile))
	if errors.Is(err, fs.ErrNotExist) {
		data, err = readPEM(filepath.Join(dir, CertFile))
	}
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("no PEM certificate in %s", dir)
	}
	return pool, nil
}

// PoolFile reads the PEM certificates of one file.
func PoolFile(path string) (*x509.CertPool, error) {
	data, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("no PEM certificate in %s", path)
	}
	return pool, nil
}

// OptionalPoolFile is PoolFile, or nil when the file does not exist or is
// empty: a Secret that is not mounted turns the check off, as in Argo CD.
func OptionalPoolFile(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		return nil, nil
	}
	return PoolFile(path)
}

// OptionalKeyPair reads a certificate and its key, or nil when the
// certificate's file does not exist: a Secret that is not mounted sends
// no certificate, as in Argo CD.
func OptionalKeyPair(certPath, keyPath string) (*tls.Certificate, error) {
	if certPath == "" || keyPath == "" {
		return nil, nil
	}
	if _, err := os.Stat(certPath); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	certPEM, err := readPEM(certPath)
	if err != nil {
		return nil, err
	}
	keyPEM, err := readPEM(keyPath)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate %s: %w", certPath, err)
	}
	return &pair, nil
}

func readPEM(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPEM {
		return nil, fmt.Errorf("%s: more than a certificate file may hold (%d bytes)", path, maxPEM)
	}
	return data, nil
}
