// Command capstan is Capstan's single binary: every component and the CLI.
package main

import (
	"os"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
)

func main() {
	os.Exit(commands.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
