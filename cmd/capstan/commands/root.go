// Package commands holds capstan's cobra commands. Each command is a thin
// shell: it parses flags and calls into internal packages.
package commands

import (
	"github.com/spf13/cobra"
)

// NewRoot returns the capstan command with every subcommand attached.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "capstan",
		Short:         "GitOps continuous delivery for Kubernetes, compatible with Argo CD",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newVersionCommand())
	return root
}
