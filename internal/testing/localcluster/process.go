package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one running component with its output in a log file.
type process struct {
	name    string
	bin     string
	args    []string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done is closed
}

// startProcess runs bin with args, its stdout and stderr in logDir/<name>.log.
// The child is put in its own process group and is killed by the kernel if
// the process that started it dies, so no component outlives its owner.
func startProcess(name, bin string, args []string, logDir string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, bin: bin, args: args, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited returns an error if the process has already stopped.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v (log: %s)", p.name, p.err, p.logPath)
	default:
		return nil
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits for the process to be reaped.
func (p *process) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
	}
}
