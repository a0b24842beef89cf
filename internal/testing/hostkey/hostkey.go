// Package hostkey makes SSH host keys for tests, as known_hosts and
// argocd-ssh-known-hosts-cm list them.
package hostkey

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"golang.org/x/crypto/ssh"
)

// New returns a new ed25519 host key: its type and its base64 data.
func New(t testing.TB) (keyType, data string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return key.Type(), base64.StdEncoding.EncodeToString(key.Marshal())
}

// Line is a known_hosts line for host with a new key.
func Line(t testing.TB, host string) string {
	t.Helper()
	keyType, data := New(t)
	return host + " " + keyType + " " + data + "\n"
}
