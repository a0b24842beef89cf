// Package program runs an outside program for a renderer (a config
// management plugin's command, a Kustomize program argocd-cm registers)
// with its output bounded, and kills it, with everything it started, when
// the render's context ends.
package program

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// maxStderrBytes is how much of a failed program's standard error its
// error quotes.
const maxStderrBytes = 64 << 10

// Command is a program to run.
type Command struct {
	// Argv is the program and its arguments. Required.
	Argv []string
	// Dir is the working directory. Default: this process's.
	Dir string
	// Env is added to this process's environment.
	Env []string
	// MaxOutput bounds the standard output kept, in bytes. Required.
	MaxOutput int
}

// Run runs c and returns its standard output. A program that fails, or
// prints more than c.MaxOutput, is an error quoting its command line (and
// the start of its standard error).
func Run(ctx context.Context, c Command) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout := &capped{max: c.MaxOutput}
	stderr := &capped{max: maxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	line := strings.Join(c.Argv, " ")
	if stdout.over {
		return nil, fmt.Errorf("`%s` printed more than %d bytes", line, c.MaxOutput)
	}
	if err != nil {
		msg := fmt.Sprintf("`%s` failed %v", line, err)
		if e := strings.TrimSpace(stderr.buf.String()); e != "" {
			msg += ": " + e
		}
		return nil, errors.New(msg)
	}
	return stdout.buf.Bytes(), nil
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
