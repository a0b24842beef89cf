package chaos

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

var (
	iterations = flag.Int("chaos.iterations", 5, "faults injected per scenario")
	seed       = flag.Int64("chaos.seed", 0, "random seed (0: from the clock, printed)")
)

var (
	cluster *localcluster.Cluster
	// capstanBin is the capstan binary built for the suite.
	capstanBin string
)

func TestMain(m *testing.M) {
	flag.Parse()
	// client-go's own retries (watches through an outage) are expected here.
	klog.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "capstan-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	capstanBin = filepath.Join(dir, "capstan")
	build := exec.Command("go", "build", "-o", capstanBin, "../cmd/capstan")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building capstan:", err)
		os.Exit(1)
	}
	code := localcluster.RunTests(m, localcluster.Options{Workloads: true}, &cluster)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
