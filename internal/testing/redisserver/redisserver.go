// Package redisserver runs a real redis-server (Debian's package) on a free
// loopback port for tests and benchmarks, without persistence.
package redisserver

import (
	"fmt"
	"net"
	"os/exec"
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
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
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
