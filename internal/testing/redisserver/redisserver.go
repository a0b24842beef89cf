// Package redisserver runs a real redis-server (Debian's package) on a free
// loopback port for tests and benchmarks, without persistence.
package redisserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Start runs redis-server until the test ends and returns its host:port.
func Start(t testing.TB) string {
	t.Helper()
	addr, stop, err := Run(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// Run starts redis-server with its working files in dir and returns its
// host:port once it listens, and a function that stops it.
func Run(dir string) (addr string, stop func(), err error) {
	return run(func(port int) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	})
}

// StartSentinel runs a Redis Sentinel that watches the redis-server at
// master under the name given, until the test ends, and returns its
// host:port.
func StartSentinel(t testing.TB, master, name string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		t.Fatal(err)
	}
	// Sentinel rewrites its configuration file, so it gets one of its own.
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	addr, stop, err := run(func(p int) []string {
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor %s %s %s 1\n", p, name, host, port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil
		}
		return []string{conf, "--sentinel"}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// run starts redis-server with the arguments args gives for a free port,
// and waits until it listens.
func run(args func(port int) []string) (addr string, stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("redis-server not installed (hack/install-deps.sh installs it): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(bin, args(port)...)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	addr = "127.0.0.1:" + strconv.Itoa(port)
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return addr, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("redis-server did not listen on %s", addr)
}
