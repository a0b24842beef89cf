package cli_test

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cli"
)

// The client commands and Argo CD's global client flags, put on a root.
func ExampleAddCommands() {
	root := &cobra.Command{Use: "argocd"}
	release := cli.AddCommands(root, true)
	defer release()
	for _, c := range root.Commands() {
		fmt.Println(c.Name())
	}
	fmt.Println(root.PersistentFlags().Lookup("server").Usage)
	// Output:
	// account
	// app
	// appset
	// cert
	// cluster
	// configure
	// context
	// gpg
	// login
	// logout
	// proj
	// relogin
	// repo
	// repocreds
	// version
	// API server address; set this or the ARGOCD_SERVER environment variable (default: the current context's)
}
