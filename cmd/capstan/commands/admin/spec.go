package admin

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cli"
	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
)

func newAdminAppCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Application tools that need no server"}
	reconcile := notYet("get-reconcile-results PATH", "print the reconcile results of every Application, computed offline", "  capstan admin app get-reconcile-results results.yaml")
	rf := reconcile.Flags()
	rf.String("l", "", "label selector of the Applications")
	rf.String("o", "yaml", "output format: yaml or json")
	rf.Bool("refresh", false, "refresh the Applications first")
	rf.String("repo-server", "", "repo server address")
	rf.Bool("server-side-diff", false, "compare with server-side diff")
	rf.Duration("ignore-normalizer-jq-execution-timeout", 0, "bound of a jq normalizer's run")
	cmdutil.AddKubeFlags(rf)
	cmd.AddCommand(cli.NewAppGenerateSpecCommand(), reconcile, notYet("diff-reconcile-results PATH1 PATH2", "compare two sets of offline reconcile results", "  capstan admin app diff-reconcile-results before.yaml after.yaml"))
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

// notYet is an Argo CD command whose feature Capstan does not have yet:
// it exists, and says so when run.
func notYet(use, short, example string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short + " (not supported by Capstan yet)", Example: example, RunE: func(cmd *cobra.Command, _ []string) error {
		return fmt.Errorf("%s: not supported by Capstan yet", cmd.CommandPath())
	}}
}
