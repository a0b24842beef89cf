// Package commands holds capstan's cobra commands. Each command is a thin
// shell: it parses flags and calls into internal packages.
package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// NewRoot returns the capstan command with every subcommand attached.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:          "capstan",
		Short:        "GitOps continuous delivery for Kubernetes, compatible with Argo CD",
		SilenceUsage: true,
		// main prints errors as one line; see Execute.
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCommand(), newRenderCommand(), newRepoServerCommand(), newRenderWorkerCommand(), newAdminCommand(), newControllerCommand(), newServerCommand(), newRunCommand(),
		newImageUpdaterCommand())
	// The client commands share Argo CD's global client flags.
	cf := &clientFlags{}
	for _, c := range []*cobra.Command{newLoginCommand(cf), newLogoutCommand(cf), newContextCommand(cf), newAppCommand(cf),
		newRepoCommand(cf, false), newRepoCommand(cf, true), newClusterCommand(cf), newProjCommand(cf), newAccountCommand(cf)} {
		cf.add(c)
		root.AddCommand(c)
	}
	return root
}

// Execute runs the command line and returns the process exit code: 0, or
// 1 after printing the error on one line of stderr (a command may choose
// another code, as app diff does).
func Execute(args []string, stdout, stderr io.Writer) int {
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		code, show := exitCode(err)
		if show {
			fmt.Fprintln(stderr, "error:", strings.Join(strings.Fields(err.Error()), " "))
		}
		return code
	}
	return 0
}
