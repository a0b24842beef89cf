// Package cmpserver runs Argo CD's config management plugin server,
// argocd-cmp-server (a name of the argocd program `make argocd` builds from
// the module tools/argocd pins), in tests, the way a plugin sidecar runs
// it: a plugin.yaml in its config directory, its socket in a directory
// shared with the repo server.
package cmpserver

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/toolbin"
)

// SocketDir returns a new directory for plugins' sockets, removed when the
// test ends. Its path is short: a Unix socket's path may not pass 107 bytes.
func SocketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Start runs one plugin server whose plugin.yaml is config, with its socket
// in socketDir, waits until it listens and returns its socket's path. The
// server stops when the test ends; its log is shown if the test failed.
func Start(t testing.TB, socketDir, config string) string {
	t.Helper()
	bin := toolbin.Find(t, "CAPSTAN_ARGOCD_BIN", filepath.Join("bin", "argocd", "argocd"), "argocd")
	home := t.TempDir()
	configDir := filepath.Join(home, "config")
	if err := os.MkdirAll(configDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configDir, "plugin.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	before := sockets(socketDir)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config-dir-path", configDir, "--loglevel", "debug")
	cmd.Env = append(os.Environ(),
		"ARGOCD_BINARY_NAME=argocd-cmp-server",
		"ARGOCD_PLUGINSOCKFILEPATH="+socketDir,
		"ARGOCD_CMP_WORKDIR="+home, // the server empties its work directory when it starts
		"HOME="+home)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting argocd-cmp-server: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("argocd-cmp-server log:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for name := range sockets(socketDir) {
			if !before[name] {
				return filepath.Join(socketDir, name)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("argocd-cmp-server made no socket in %s within 30 s:\n%s", socketDir, log.String())
	return ""
}

func sockets(dir string) map[string]bool {
	out := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out[e.Name()] = true
		}
	}
	return out
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
