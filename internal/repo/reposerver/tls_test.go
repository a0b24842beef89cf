package reposerver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/repo"
)

// writeCert writes a self-signed certificate for hosts into a new
// directory, as a mounted argocd-repo-server-tls Secret.
func writeCert(t *testing.T, hosts []string) string {
	t.Helper()
	dir := t.TempDir()
	cert, key, err := certs.SelfSigned("argocd-repo-server", hosts)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{certs.CertFile: cert, certs.KeyFile: key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestClientTLS(t *testing.T) {
	svc := repo.NewService(repo.Options{Root: t.TempDir()})
	mounted := writeCert(t, []string{"127.0.0.1"})
	addr := listen(t, svc, mounted)
	other := writeCert(t, []string{"127.0.0.1"})
	req := &repo.RefsRequest{RepoURL: "https://127.0.0.1:1/none.git"}

	for _, tc := range []struct {
		name    string
		tls     ClientTLS
		wantErr string
	}{
		{"default TLS, not verified", ClientTLS{}, ""},
		{"strict TLS with the mounted Secret", ClientTLS{Strict: true, CADir: mounted}, ""},
		{"strict TLS with another certificate", ClientTLS{Strict: true, CADir: other}, "certificate"},
		// *.repo.server.ca.cert.path: a CA file verifies without Strict.
		{"a CA file the certificate chains to", ClientTLS{CACertPath: filepath.Join(mounted, certs.CertFile)}, ""},
		{"a CA file of another certificate", ClientTLS{CACertPath: filepath.Join(other, certs.CertFile)}, "certificate"},
		{"plaintext to a TLS server", ClientTLS{Plaintext: true}, "connection error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dial(t, addr, tc.tls).Refs(context.Background(), req)
			// The repository does not exist: reaching the repo server at all
			// is an error from the repo server, not from the connection.
			connected := err != nil && !IsCode(err, "Unavailable")
			if tc.wantErr == "" && !connected {
				t.Fatalf("did not reach the repo server: %v", err)
			}
			if tc.wantErr != "" && (connected || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want a connection error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestStrictTLSWithoutCertificates(t *testing.T) {
	if _, err := Dial("127.0.0.1:1", ClientTLS{Strict: true, CADir: t.TempDir()}); err == nil {
		t.Fatal("strict TLS with no certificate to trust: no error")
	}
}

// TestPlaintext: a repo server serving plain gRPC (reposerver.disable.tls)
// is reached by a client told so (*.repo.server.plaintext), not by one
// speaking TLS.
func TestPlaintext(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(MessageLimits(0)...)
	Register(srv, repo.NewService(repo.Options{Root: t.TempDir()}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	req := &repo.RefsRequest{RepoURL: "https://127.0.0.1:1/none.git"}
	if _, err := dial(t, lis.Addr().String(), ClientTLS{Plaintext: true}).Refs(context.Background(), req); err == nil || IsCode(err, "Unavailable") {
		t.Errorf("a plaintext client did not reach the repo server: %v", err)
	}
	if _, err := dial(t, lis.Addr().String(), ClientTLS{}).Refs(context.Background(), req); err == nil || !IsCode(err, "Unavailable") {
		t.Errorf("a TLS client reached a plaintext repo server: %v", err)
	}
}
