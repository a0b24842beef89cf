// Command capstan is Capstan's single binary: every component and the CLI.
package main

import (
	"os"
	"path/filepath"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
	"github.com/capstan-cd/capstan/internal/memlimit"
	"github.com/capstan-cd/capstan/internal/repo/render/kustomize"
)

func main() {
	// The runtime aims to stay under the container's memory limit
	// (GOMEMLIMIT, when set, wins).
	memlimit.Set()
	// A Kustomize build with --enable-helm runs this program as its helm.
	if kustomize.IsHelmRelay(os.Args[0]) {
		os.Exit(kustomize.RunHelmRelay(os.Args[0], os.Args[1:], os.Stdout, os.Stderr))
	}
	// As Argo CD's binary, ARGOCD_BINARY_NAME names the program when set.
	name := filepath.Base(os.Args[0])
	if n := os.Getenv("ARGOCD_BINARY_NAME"); n != "" {
		name = n
	}
	program, args := commands.Program(name, os.Args[1:])
	os.Exit(commands.ExecuteAs(program, args, os.Stdout, os.Stderr))
}
