package reposerver

import (
	"crypto/tls"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/capstan-cd/capstan/internal/certs"
)

// ClientTLS says how a client reaches a repo server. The zero value is
// Argo CD's default: TLS whose certificate is not verified (the repo
// server's own is self-signed unless argocd-repo-server-tls holds one).
type ClientTLS struct {
	// Plaintext turns TLS off (--repo-server-plaintext), for a repo server
	// started with --disable-tls. Default: TLS.
	Plaintext bool
	// Strict verifies the repo server's certificate against the
	// certificates in CADir (--repo-server-strict-tls). Default: off.
	Strict bool
	// CADir holds ca.crt, or the repo server's tls.crt, for Strict: the
	// argocd-repo-server-tls Secret as mounted into the client.
	CADir string
	// CACertPath, if set, is a file of the CA certificates the repo
	// server's certificate must chain to: verification without Strict
	// (--repo-server-ca-cert-path). Default: none.
	CACertPath string
	// ClientCertPath and ClientKeyPath are the certificate this client
	// shows a repo server that asks for one (mutual TLS,
	// --repo-server-client-cert-path and -key-path); none when the
	// certificate's file does not exist. Default: none.
	ClientCertPath, ClientKeyPath string
}

// credentials returns the transport credentials t asks for.
func (t ClientTLS) credentials() (credentials.TransportCredentials, error) {
	if t.Plaintext {
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var err error
	switch {
	case t.CACertPath != "":
		cfg.RootCAs, err = certs.PoolFile(t.CACertPath)
	case t.Strict:
		cfg.RootCAs, err = certs.Pool(t.CADir)
	default:
		cfg.InsecureSkipVerify = true //nolint:gosec // Argo CD's default, see ClientTLS
	}
	if err != nil {
		return nil, fmt.Errorf("verifying the repo server: %w", err)
	}
	mine, err := certs.OptionalKeyPair(t.ClientCertPath, t.ClientKeyPath)
	if err != nil {
		return nil, fmt.Errorf("mutual TLS to the repo server: %w", err)
	}
	if mine != nil {
		cfg.Certificates = []tls.Certificate{*mine}
	}
	return credentials.NewTLS(cfg), nil
}

// ServerOption returns the option that makes a gRPC server serve cert
// with the TLS versions and cipher suites policy allows. With a file of
// CA certificates at clientCAPath (--client-ca-path), every client must
// show a certificate one of them signed (mutual TLS); no such file, or an
// empty one, asks clients for none, as in Argo CD.
func ServerOption(cert tls.Certificate, policy certs.TLSPolicy, clientCAPath string) (grpc.ServerOption, error) {
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if err := policy.Apply(cfg); err != nil {
		return nil, fmt.Errorf("the repo server's TLS: %w", err)
	}
	clients, err := certs.OptionalPoolFile(clientCAPath)
	if err != nil {
		return nil, fmt.Errorf("the repo server's client CA: %w", err)
	}
	if clients != nil {
		cfg.ClientCAs, cfg.ClientAuth = clients, tls.RequireAndVerifyClientCert
	}
	return grpc.Creds(credentials.NewTLS(cfg)), nil
}

// Hosts are the names a repo server's self-signed certificate is made for:
// its Service's names in namespace, as Argo CD's are.
func Hosts(namespace string) []string {
	return []string{"localhost", "127.0.0.1", "argocd-repo-server", "argocd-repo-server." + namespace + ".svc"}
}
