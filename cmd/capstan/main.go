// Command capstan is Capstan's single binary: every component and the CLI.
package main

import (
	"os"

	"github.com/capstan-cd/capstan/cmd/capstan/commands"
)

func main() {
	if err := commands.NewRoot().Execute(); err != nil {
		os.Exit(1)
	}
}
