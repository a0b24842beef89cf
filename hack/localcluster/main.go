// Command localcluster runs a local workloads cluster in the background for
// `make cluster`, `make cluster-down` and `make run`.
//
//	localcluster up   --dir .local   start it (no-op when running); kubeconfig at .local/kubeconfig
//	localcluster down --dir .local   stop it and every process it started
//
// `up` starts a detached copy of itself (`serve`) that owns the cluster and
// stops it on SIGTERM; the cluster's processes die with it in any case.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: localcluster up|down|serve --dir DIR")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".local", "directory for the kubeconfig, pid file, data and logs")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err == nil {
		s := state{dir: abs}
		switch os.Args[1] {
		case "up":
			err = s.up()
		case "down":
			err = s.down()
		case "serve":
			err = s.serve()
		default:
			err = fmt.Errorf("unknown command %q: use up or down", os.Args[1])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

type state struct{ dir string }

func (s state) pidFile() string    { return filepath.Join(s.dir, "cluster.pid") }
func (s state) kubeconfig() string { return filepath.Join(s.dir, "kubeconfig") }
func (s state) serveLog() string   { return filepath.Join(s.dir, "localcluster.log") }
func (s state) clusterDir() string { return filepath.Join(s.dir, "cluster") }

// running returns the pid of a live serve process, or 0.
func (s state) running() int {
	data, err := os.ReadFile(s.pidFile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

func (s state) up() error {
	if pid := s.running(); pid != 0 {
		fmt.Printf("local cluster already running (pid %d); kubeconfig: %s\n", pid, s.kubeconfig())
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	_ = os.Remove(s.kubeconfig())
	logFile, err := os.Create(s.serveLog())
	if err != nil {
		return err
	}
	defer logFile.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "--dir", s.dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	fmt.Printf("starting local cluster (Kubernetes %s) ...\n", localcluster.KubeVersion)
	deadline := time.After(3 * time.Minute)
	for {
		if _, err := os.Stat(s.kubeconfig()); err == nil {
			fmt.Printf("local cluster running (pid %d); kubeconfig: %s\n", cmd.Process.Pid, s.kubeconfig())
			return nil
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(s.serveLog())
			return fmt.Errorf("cluster failed to start (%v):\n%s", err, log)
		case <-deadline:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
			return fmt.Errorf("cluster not ready after 3 minutes; see %s", s.serveLog())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s state) serve() error {
	_ = os.RemoveAll(s.clusterDir())
	c, err := localcluster.Start(context.Background(), localcluster.Options{Workloads: true, Dir: s.clusterDir()})
	if err != nil {
		return err
	}
	stop := func() error {
		_ = os.Remove(s.kubeconfig())
		_ = os.Remove(s.pidFile())
		return c.Stop()
	}
	if err := os.WriteFile(s.pidFile(), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return errors.Join(err, stop())
	}
	data, err := os.ReadFile(c.KubeconfigPath)
	if err == nil {
		// Written last: its presence tells `up` the cluster is ready.
		err = os.WriteFile(s.kubeconfig(), data, 0o600)
	}
	if err != nil {
		return errors.Join(err, stop())
	}
	fmt.Printf("cluster ready at %s, component logs in %s\n", c.Config.Host, c.LogDir())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	fmt.Printf("received %s, stopping\n", <-sig)
	return stop()
}

func (s state) down() error {
	pid := s.running()
	if pid == 0 {
		_ = os.Remove(s.pidFile())
		fmt.Println("no local cluster running")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	for i := 0; i < 300; i++ {
		if syscall.Kill(pid, 0) != nil {
			fmt.Println("local cluster stopped")
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = os.Remove(s.pidFile())
	_ = os.Remove(s.kubeconfig())
	fmt.Println("local cluster killed after 30s")
	return nil
}
