package localcluster

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// RunTests starts a cluster, stores it in *cluster, runs the package's tests
// and stops the cluster. It returns the exit code for os.Exit. When a test
// fails it prints the last lines of every component's log and copies the
// logs to a directory it names, so CI output says what the cluster saw.
//
// With -short no cluster is started and *cluster stays nil: the package's
// unit tests run, and each test that needs the cluster calls Need first,
// which skips it. Examples cannot skip, so unless -run says otherwise the
// package's examples, which may use the cluster, run only without -short.
func RunTests(m *testing.M, opts Options, cluster **Cluster) int {
	flag.Parse()
	if testing.Short() {
		if run := flag.Lookup("test.run"); run != nil && run.Value.String() == "" {
			_ = run.Value.Set("^(Test|Fuzz)")
		}
		return m.Run()
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting local cluster: %v\n", err)
		return 1
	}
	*cluster = c
	code := m.Run()
	if code != 0 {
		c.WriteLogTails(os.Stderr, 40)
		if kept, err := c.keepLogs(); err == nil {
			fmt.Fprintf(os.Stderr, "local cluster logs kept in %s\n", kept)
		}
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping local cluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Need skips t when the tests run with -short, which starts no cluster:
// the first line of every test that uses the package's cluster.
func Need(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the local cluster, which -short does not start")
	}
}

// WriteLogTails writes the last n lines of each component's log to w.
func (c *Cluster) WriteLogTails(w io.Writer, n int) {
	files, _ := filepath.Glob(filepath.Join(c.LogDir(), "*.log"))
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "=== %s (last %d lines) ===\n%s\n", filepath.Base(f), n, lastLines(data, n))
	}
}

// keepLogs copies the log directory somewhere Stop will not remove.
func (c *Cluster) keepLogs() (string, error) {
	dst, err := os.MkdirTemp("", "capstan-cluster-logs-")
	if err != nil {
		return "", err
	}
	return dst, os.CopyFS(dst, os.DirFS(c.LogDir()))
}

func lastLines(data []byte, n int) []byte {
	data = bytes.TrimRight(data, "\n")
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}
