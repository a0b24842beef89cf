// Package memlimit sets the Go runtime's soft memory limit from the
// container's memory limit, so that the garbage collector works harder as
// the process nears the limit instead of the kernel killing it.
package memlimit

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction of the container's limit the runtime aims to stay under: the
// rest is left for memory the runtime does not manage (stacks, cgo).
const Fraction = 0.9

// cgroupFiles hold the container's memory limit: cgroup v2, then v1.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Set applies Fraction of the container's memory limit as the runtime's
// memory limit, unless GOMEMLIMIT already sets one or there is no limit.
// It returns the limit set, or 0.
func Set() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	for _, f := range cgroupFiles {
		if limit := read(f); limit > 0 {
			n := int64(float64(limit) * Fraction)
			debug.SetMemoryLimit(n)
			return n
		}
	}
	return 0
}

// read returns the limit a cgroup file holds; 0 for none ("max", or the
// huge number cgroup v1 uses for no limit) or an unreadable file.
func read(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0
	}
	return n
}
