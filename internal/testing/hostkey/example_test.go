package hostkey_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/internal/testing/hostkey"
)

// A known_hosts line for a host: the host, the key's type and its data.
func ExampleLine() {
	line := hostkey.Line(&testing.T{}, "git.example.com")
	fields := strings.Fields(line)
	fmt.Println(fields[0], fields[1], len(fields))
	// Output: git.example.com ssh-ed25519 3
}
