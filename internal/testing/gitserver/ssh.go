package gitserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SSHServer serves the repositories of a directory over SSH with a real
// sshd (Debian's openssh-server), accepting one client key.
type SSHServer struct {
	// ClientKey is the PEM private key the server accepts.
	ClientKey string
	// KnownHosts is a known_hosts line for the server's host key.
	KnownHosts string

	host string // user@127.0.0.1:port
	root string
}

// NewSSH starts sshd on a free loopback port until the test ends.
func NewSSH(t testing.TB) *SSHServer {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		t.Fatalf("sshd not installed (hack/install-deps.sh installs openssh-server): %v", err)
	}
	dir := t.TempDir()
	keygen := func(name string) (priv, pub string) {
		path := filepath.Join(dir, name)
		run(t, "", "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path)
		p, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		q, err := os.ReadFile(path + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return string(p), strings.TrimSpace(string(q))
	}
	_, hostPub := keygen("host")
	clientPriv, clientPub := keygen("client")
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(clientPub+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
AllowUsers %s
`, port, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"), me.Username)
	cfgPath := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(dir, "sshd.log")
	cmd := exec.Command(sshd, "-D", "-f", cfgPath, "-E", logFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("sshd log:\n%s", log)
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			log, _ := os.ReadFile(logFile)
			t.Fatalf("sshd did not listen on %s:\n%s", addr, log)
		}
	}
	return &SSHServer{
		ClientKey:  clientPriv,
		KnownHosts: fmt.Sprintf("[127.0.0.1]:%d %s\n", port, hostPub),
		host:       fmt.Sprintf("%s@127.0.0.1:%d", me.Username, port),
		root:       t.TempDir(),
	}
}

// NewRepo creates a bare repository reachable as ssh://user@127.0.0.1:port/path.
func (s *SSHServer) NewRepo(t testing.TB, name string) *Repo {
	t.Helper()
	dir := filepath.Join(s.root, name+".git")
	run(t, "", "git", "init", "-q", "--bare", "-b", "main", dir)
	return newRepo(t, dir, "ssh://"+s.host+dir)
}
