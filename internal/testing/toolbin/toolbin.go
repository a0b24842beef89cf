// Package toolbin finds the outside programs tests run (Dex, Argo CD's
// CLI), which the Makefile builds from the tools/<name> modules into bin/.
package toolbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Find returns the program named by the environment variable env, or rel
// (bin/<name>/<name>) in the working directory or the nearest directory
// above it that has it; the test fails, naming the make target, when it
// is not built.
func Find(t testing.TB, env, rel, target string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		bin = findUp(t, rel)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not built (run `make %s`): %v", rel, target, err)
	}
	return bin
}

func findUp(t testing.TB, rel string) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, rel)); err == nil {
			return filepath.Join(dir, rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return rel
		}
		dir = parent
	}
}

// RunWith builds the Go program pkg, a tool of Capstan's module (go.mod's
// tool lines), into a temporary directory, sets *bin to it, runs the tests
// and removes it: a TestMain's whole body is os.Exit(RunWith(m, pkg, &bin)).
func RunWith(m *testing.M, pkg string, bin *string) int {
	dir, err := os.MkdirTemp("", "capstan-tool-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, filepath.Base(pkg))
	if msg, err := exec.Command("go", "build", "-o", *bin, pkg).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, msg)
		return 1
	}
	return m.Run()
}
