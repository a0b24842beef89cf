// Package dexserver runs Dex, a real OpenID Connect provider built from its
// Go module by `make dex`, on a free loopback port for tests. Its one
// connector is Dex's mock callback connector, which logs every browser in
// as the same user (kilgore@kilgore.trout, in group "authors") without a
// login form, so tests can walk the whole authorization-code flow.
package dexserver

import (
	"bytes"
	"fmt"
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

// Client is an OAuth2 client Dex accepts.
type Client struct {
	ID, Secret   string
	RedirectURIs []string
	// Public clients (a CLI) have no secret.
	Public bool
}

// Dex is a running Dex.
type Dex struct {
	// Issuer is its issuer URL.
	Issuer string
}

// The user the mock connector logs in, and the group it belongs to.
const (
	Email = "kilgore@kilgore.trout"
	Group = "authors"
)

// Start runs Dex until the test ends. The binary is $CAPSTAN_DEX_BIN, or
// bin/dex/dex above the working directory.
func Start(t testing.TB, clients ...Client) *Dex {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	issuer := fmt.Sprintf("http://127.0.0.1:%d/dex", port)

	var cfg bytes.Buffer
	fmt.Fprintf(&cfg, "issuer: %s\nstorage: {type: memory}\nweb: {http: 127.0.0.1:%d}\n", issuer, port)
	fmt.Fprintf(&cfg, "logger: {level: error}\noauth2: {skipApprovalScreen: true}\n")
	fmt.Fprintf(&cfg, "connectors:\n- {type: mockCallback, id: mock, name: Mock}\nstaticClients:\n")
	for _, c := range clients {
		fmt.Fprintf(&cfg, "- id: %s\n  name: %s\n  public: %t\n", strconv.Quote(c.ID), strconv.Quote(c.ID), c.Public)
		if c.Secret != "" {
			fmt.Fprintf(&cfg, "  secret: %s\n", strconv.Quote(c.Secret))
		}
		fmt.Fprintf(&cfg, "  redirectURIs:\n")
		for _, u := range c.RedirectURIs {
			fmt.Fprintf(&cfg, "  - %s\n", strconv.Quote(u))
		}
	}
	Serve(t, cfg.Bytes(), issuer)
	return &Dex{Issuer: issuer}
}

// Serve runs Dex with config until the test ends, once issuer's discovery
// document answers (issuer as Dex serves it, which may differ from the
// issuer in config when Dex is reached behind a proxy).
func Serve(t testing.TB, config []byte, issuer string) {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, config, 0o600); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "dex.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", path)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logs.Close()
	})
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(issuer + "/.well-known/openid-configuration")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	data, _ := os.ReadFile(logs.Name())
	t.Fatalf("Dex did not start at %s:\n%s", issuer, data)
}

// Binary is the Dex program: $CAPSTAN_DEX_BIN, or bin/dex/dex above the
// working directory.
func Binary(t testing.TB) string {
	return toolbin.Find(t, "CAPSTAN_DEX_BIN", filepath.Join("bin", "dex", "dex"), "dex")
}
