// Package cmpserver runs config management plugin servers in tests, the
// way a plugin sidecar runs them: a plugin.yaml in a config directory, the
// socket in a directory shared with the repo server. Start runs Argo CD's
// own, argocd-cmp-server (a name of the argocd program `make argocd`
// builds from the module tools/argocd pins); Serve runs Capstan's in the
// test's process.
package cmpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
	"github.com/capstan-cd/capstan/internal/testing/logbuf"
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
	log := &logbuf.Buffer{}
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

// Serve runs Capstan's plugin server (capstan cmp-server) for config in
// the test's process, with its socket in socketDir, and returns the
// socket's path once it listens. It stops when the test ends.
func Serve(t testing.TB, socketDir, config string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, plugin.ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := plugin.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- plugin.Serve(ctx, plugin.ServeOptions{Config: cfg, SocketDir: socketDir, WorkDir: filepath.Join(dir, "work")})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("plugin server: %v", err)
		}
	})
	socket := filepath.Join(socketDir, cfg.SocketName())
	for range 500 {
		if sockets(socketDir)[cfg.SocketName()] {
			return socket
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no socket at %s", socket)
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
