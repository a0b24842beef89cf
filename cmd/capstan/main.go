// Command capstan is Capstan's single binary: every component and the CLI.
package main

import (
	"os"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
	"github.com/capstan-cd/capstan/internal/memlimit"
)

func main() {
	// The runtime aims to stay under the container's memory limit
	// (GOMEMLIMIT, when set, wins).
	memlimit.Set()
	os.Exit(commands.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
