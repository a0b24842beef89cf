package chaos

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// capstan is `capstan run` as a child process, started and killed by a test.
type capstan struct {
	t    *testing.T
	args []string
	log  string // every run appends its output here
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	runs int
}

// newCapstan prepares `capstan run` with a control namespace and args
// (after the suite's defaults). It is killed when the test ends.
func newCapstan(t *testing.T, namespace string, args ...string) *capstan {
	dir := t.TempDir()
	c := &capstan{t: t, log: filepath.Join(dir, "capstan.log"), args: append([]string{"run",
		"--namespace", namespace, "--root", filepath.Join(dir, "root"),
		"--server-port", "0", "--image-updater=false", "--metrics-port", "0",
		"--leader-elect=false", "--repo-poll-interval", "1s", "--app-resync", "10s",
	}, args...)}
	t.Cleanup(func() {
		c.kill()
		if t.Failed() {
			c.printTail(60)
		}
	})
	return c
}

// start runs a new capstan process.
func (c *capstan) start() {
	c.t.Helper()
	out, err := os.OpenFile(c.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	c.runs++
	fmt.Fprintf(out, "--- run %d\n", c.runs)
	c.cmd = exec.Command(capstanBin, c.args...)
	c.cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.KubeconfigPath)
	c.cmd.Stdout, c.cmd.Stderr = out, out
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	c.done = done
	go func(cmd *exec.Cmd, out *os.File) {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}(c.cmd, out)
}

// kill stops the running process at once (SIGKILL): nothing it was doing
// is finished or cleaned up.
func (c *capstan) kill() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	c.cmd = nil
}

// alive reports whether the process is still running.
func (c *capstan) alive() bool {
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func (c *capstan) printTail(n int) {
	data, err := os.ReadFile(c.log)
	if err != nil {
		return
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	c.t.Logf("last lines of capstan's log:\n%s", bytes.Join(lines, []byte("\n")))
}
