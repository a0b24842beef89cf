// Package mailserver runs a real SMTP server for tests: Mailpit, built by
// `make mailpit` from tools/mailpit, on free loopback ports, with
// STARTTLS (a self-signed certificate) and any credentials accepted. Tests
// read what it received through Mailpit's API.
package mailserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// Server is a running Mailpit.
type Server struct {
	// Host and Port are where it takes SMTP.
	Host string
	Port int
	api  string
}

// Start runs Mailpit until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := toolbin.Find(t, "CAPSTAN_MAILPIT_BIN", "bin/mailpit/mailpit", "mailpit")
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	smtpPort, httpPort := freePort(t), freePort(t)
	cmd := exec.Command(bin,
		"--smtp", "127.0.0.1:"+strconv.Itoa(smtpPort), "--listen", "127.0.0.1:"+strconv.Itoa(httpPort),
		"--database", filepath.Join(dir, "mail.db"),
		"--smtp-tls-cert", cert, "--smtp-tls-key", key, "--smtp-require-starttls", "--smtp-auth-accept-any", "--disable-version-check")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	s := &Server{Host: "127.0.0.1", Port: smtpPort, api: "http://127.0.0.1:" + strconv.Itoa(httpPort)}
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.api + "/api/v1/info"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
	}
	t.Fatalf("mailpit did not answer on %s", s.api)
	return nil
}

// Message is one mail received.
type Message struct {
	ID      string
	Subject string
	From    string
	To      []string
	Text    string
}

// Messages lists what was received, newest first, with each body.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	var list struct {
		Messages []struct {
			ID      string
			Subject string
			From    struct{ Address string }
			To      []struct{ Address string }
		}
	}
	s.get(t, "/api/v1/messages", &list)
	out := make([]Message, 0, len(list.Messages))
	for _, m := range list.Messages {
		msg := Message{ID: m.ID, Subject: m.Subject, From: m.From.Address}
		for _, to := range m.To {
			msg.To = append(msg.To, to.Address)
		}
		var full struct{ Text string }
		s.get(t, "/api/v1/message/"+m.ID, &full)
		msg.Text = full.Text
		out = append(out, msg)
	}
	return out
}

func (s *Server) get(t testing.TB, path string, into any) {
	t.Helper()
	resp, err := http.Get(s.api + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailpit"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for file, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(fmt.Errorf("writing %s: %w", file, err))
		}
	}
	return certFile, keyFile
}
