// Command capstan is Capstan's single binary: every component and the CLI.
package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
	"github.com/capstan-cd/capstan/internal/memlimit"
)

func main() {
	// The runtime aims to stay under the container's memory limit
	// (GOMEMLIMIT, when set, wins).
	memlimit.Set()
	program := "capstan"
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == commands.ArgoCDName {
		program = commands.ArgoCDName
	}
	os.Exit(commands.ExecuteAs(program, os.Args[1:], os.Stdout, os.Stderr))
}
