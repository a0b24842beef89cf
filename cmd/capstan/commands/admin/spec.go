package admin

import (
	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cli"
)

func newAdminAppCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Application tools that need no server"}
	cmd.AddCommand(cli.NewAppGenerateSpecCommand(), newReconcileResultsCommand(), newDiffReconcileResultsCommand())
	return cmd
}

func newAdminProjCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "proj", Short: "AppProject tools that need no server"}
	cmd.AddCommand(cli.NewProjGenerateSpecCommand(), newAdminProjAllowListCommand(), newAdminProjUpdateRolePolicyCommand())
	return cmd
}

func newAdminRepoCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "repo", Short: "Repository tools that need no server"}
	cmd.AddCommand(cli.NewRepoGenerateSpecCommand())
	return cmd
}
