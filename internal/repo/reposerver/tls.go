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
}

// credentials returns the transport credentials t asks for.
func (t ClientTLS) credentials() (credentials.TransportCredentials, error) {
	if t.Plaintext {
		return insecure.NewCredentials(), nil
	}
	if !t.Strict {
		return credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}), nil //nolint:gosec // Argo CD's default, see ClientTLS
	}
	pool, err := certs.Pool(t.CADir)
	if err != nil {
		return nil, fmt.Errorf("strict TLS to the repo server: %w", err)
	}
	return credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}), nil
}

// ServerOption returns the option that makes a gRPC server serve cert
// with the TLS versions and cipher suites policy allows.
func ServerOption(cert tls.Certificate, policy certs.TLSPolicy) (grpc.ServerOption, error) {
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if err := policy.Apply(cfg); err != nil {
		return nil, fmt.Errorf("the repo server's TLS: %w", err)
	}
	return grpc.Creds(credentials.NewTLS(cfg)), nil
}

// Hosts are the names a repo server's self-signed certificate is made for:
// its Service's names in namespace, as Argo CD's are.
func Hosts(namespace string) []string {
	return []string{"localhost", "127.0.0.1", "argocd-repo-server", "argocd-repo-server." + namespace + ".svc"}
}
