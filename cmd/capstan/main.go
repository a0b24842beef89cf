// Command capstan is Capstan's single binary: every component and the CLI.
package main

import (
	"os"
	"path/filepath"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
	"github.com/capstan-cd/capstan/internal/memlimit"
)

func main() {
	// The runtime aims to stay under the container's memory limit
	// (GOMEMLIMIT, when set, wins).
	memlimit.Set()
	// As Argo CD's binary, ARGOCD_BINARY_NAME names the program when set.
	name := filepath.Base(os.Args[0])
	if n := os.Getenv("ARGOCD_BINARY_NAME"); n != "" {
		name = n
	}
	program, args := commands.Program(name, os.Args[1:])
	os.Exit(commands.ExecuteAs(program, args, os.Stdout, os.Stderr))
}
