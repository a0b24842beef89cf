package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestUpAndDown runs the built command the way `make cluster` and
// `make cluster-down` do, and checks that the node is Ready and that nothing
// started by `up` outlives `down`.
func TestUpAndDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a local cluster")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "localcluster")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "state")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--dir", dir)...).CombinedOutput()
		if err != nil {
			t.Fatalf("localcluster %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(bin, "down", "--dir", dir).Run() })

	run("up")
	if out := run("up"); !strings.Contains(out, "already running") {
		t.Errorf("second up did not notice the running cluster:\n%s", out)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 || !ready(&nodes.Items[0]) {
		t.Fatalf("want one Ready node, got %+v", nodes.Items)
	}
	if len(processesUsing(t, dir)) == 0 {
		t.Fatal("found no cluster processes while running; the check below would prove nothing")
	}

	run("down")
	if left := processesUsing(t, dir); len(left) > 0 {
		t.Errorf("processes left after down: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); !os.IsNotExist(err) {
		t.Error("kubeconfig left after down")
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// processesUsing lists the command lines of processes that mention dir.
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(line, dir) {
			found = append(found, e.Name()+": "+line)
		}
	}
	return found
}
