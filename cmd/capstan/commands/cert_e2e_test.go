package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/testing/argocdcli"
	"github.com/capstan-cd/capstan/internal/testing/hostkey"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// trustFiles writes a PEM certificate, a known_hosts line and an armored
// GPG public key into dir, returning their paths and the key's ID.
func trustFiles(t *testing.T, dir string) (pemFile, knownHosts, gpgFile, keyID string) {
	t.Helper()
	cert, _, err := certs.SelfSigned("git.example.com", []string{"git.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	entity, err := openpgp.NewEntity("Jane Doe", "", "jane@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var armored strings.Builder
	w, err := armor.Encode(&armored, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := entity.Serialize(w); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	pemFile, knownHosts, gpgFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "known_hosts"), filepath.Join(dir, "jane.asc")
	for name, data := range map[string][]byte{
		pemFile:    cert,
		knownHosts: []byte(hostkey.Line(t, "ssh.example.com")),
		gpgFile:    []byte(armored.String()),
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return pemFile, knownHosts, gpgFile, fmt.Sprintf("%016X", entity.PrimaryKey.KeyId)
}

// TestCertAndGPGCommands manages trusted certificates, SSH host keys and
// GPG keys with Capstan's CLI and with Argo CD's, over gRPC and gRPC-Web:
// what they add lands in Argo CD's ConfigMaps and is listed, shown and
// removed again.
func TestCertAndGPGCommands(t *testing.T) {
	localcluster.Need(t)
	f := startCapstan(t, false)
	f.login()
	pemFile, knownHosts, gpgFile, keyID := trustFiles(t, t.TempDir())
	argocd := argocdcli.New(t)
	argocd.Expect(0, "login", f.addr, "--username", "admin", "--password", f.password, "--insecure")
	clients := map[string]func(want int, args ...string) string{
		"capstan": f.expect,
		"argocd":  argocd.Expect,
		"argocd --grpc-web": func(want int, args ...string) string {
			return argocd.Expect(want, append(args, "--grpc-web")...)
		},
	}
	for name, run := range clients {
		t.Run(name, func(t *testing.T) {
			if out := run(0, "cert", "add-tls", "git.example.com", "--from", pemFile); !strings.Contains(out, "Created entry with 1 PEM certificates for repository server git.example.com") {
				t.Errorf("cert add-tls:\n%s", out)
			}
			if out := run(0, "cert", "add-ssh", "--batch", "--from", knownHosts); !strings.Contains(out, "Successfully created 1 SSH known host entries") {
				t.Errorf("cert add-ssh:\n%s", out)
			}
			var tlsCM, sshCM corev1.ConfigMap
			if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "argocd-tls-certs-cm"}, &tlsCM); err != nil || !strings.Contains(tlsCM.Data["git.example.com"], "BEGIN CERTIFICATE") {
				t.Errorf("argocd-tls-certs-cm: %v %v", err, tlsCM.Data)
			}
			if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "argocd-ssh-known-hosts-cm"}, &sshCM); err != nil || !strings.HasPrefix(sshCM.Data["ssh_known_hosts"], "ssh.example.com ssh-ed25519 ") {
				t.Errorf("argocd-ssh-known-hosts-cm: %v %v", err, sshCM.Data)
			}
			out := run(0, "cert", "list")
			if !strings.Contains(out, "CN=git.example.com") || !strings.Contains(out, "ssh.example.com") || !strings.Contains(out, "SHA256:") {
				t.Errorf("cert list:\n%s", out)
			}
			if out := run(0, "cert", "list", "--cert-type", "ssh"); strings.Contains(out, "git.example.com") {
				t.Errorf("cert list --cert-type ssh:\n%s", out)
			}
			if out := run(0, "cert", "rm", "git.example.com", "--cert-type", "https"); !strings.Contains(out, "Removed cert for 'git.example.com' of type 'https'") {
				t.Errorf("cert rm:\n%s", out)
			}
			run(0, "cert", "rm", "ssh.example.com", "--cert-type", "ssh")
			if out := run(0, "cert", "list"); strings.Contains(out, "example.com") {
				t.Errorf("cert list after rm:\n%s", out)
			}

			if out := run(0, "gpg", "add", "--from", gpgFile); !strings.Contains(out, "Created 1 key(s) from input file") {
				t.Errorf("gpg add:\n%s", out)
			}
			if out := run(0, "gpg", "list"); !strings.Contains(out, keyID) || !strings.Contains(out, "Jane Doe <jane@example.com>") {
				t.Errorf("gpg list:\n%s", out)
			}
			if out := run(0, "gpg", "get", keyID); !strings.Contains(out, "Key fingerprint:") || !strings.Contains(out, "BEGIN PGP PUBLIC KEY BLOCK") {
				t.Errorf("gpg get:\n%s", out)
			}
			if out := run(0, "gpg", "rm", keyID); !strings.Contains(out, "Deleted key with key ID "+keyID) {
				t.Errorf("gpg rm:\n%s", out)
			}
			if out := run(0, "gpg", "list"); strings.Contains(out, keyID) {
				t.Errorf("gpg list after rm:\n%s", out)
			}
		})
	}
}
