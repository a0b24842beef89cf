package memlimit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{
		"max\n":                 0,
		"536870912\n":           536870912,
		"9223372036854771712\n": 0, // cgroup v1's "no limit"
		"garbage":               0,
	} {
		f := filepath.Join(dir, "limit")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := read(f); got != want {
			t.Errorf("read(%q) = %d, want %d", content, got, want)
		}
	}
	if got := read(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("a missing file: %d", got)
	}
}

func ExampleSet() {
	// In main, before anything else: the runtime aims to stay under 90% of
	// the container's memory limit, unless GOMEMLIMIT says otherwise.
	_ = Set()
}
