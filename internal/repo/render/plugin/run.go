package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// maxStderrBytes is how much of a failed command's standard error its
// error quotes.
const maxStderrBytes = 64 << 10

// run runs c (a command of the plugin.yaml, not of any request) in dir
// with the sidecar's environment and env added, and returns what it
// printed without its last newline. The command and everything it started
// are killed when ctx ends.
func (s *sidecar) run(ctx context.Context, c Command, dir string, env []string) (string, error) {
	argv := append(slices.Clone(c.Command), c.Args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout := &capped{max: s.opts.MaxOutputBytes}
	stderr := &capped{max: maxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	s.opts.Log.Info("plugin command", "plugin", s.opts.Config.Metadata.Name, "command", argv[0], "dir", dir,
		"duration", time.Since(start).String(), "error", errString(err))
	if stdout.over {
		return "", fmt.Errorf("`%s` printed more than %d bytes", strings.Join(argv, " "), s.opts.MaxOutputBytes)
	}
	if err != nil {
		msg := fmt.Sprintf("`%s` failed %v", strings.Join(argv, " "), err)
		if e := strings.TrimSpace(stderr.buf.String()); e != "" {
			msg += ": " + e
		}
		return "", errors.New(msg)
	}
	return strings.TrimSuffix(stdout.buf.String(), "\n"), nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// capped keeps up to max bytes and notes whether more came.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}
