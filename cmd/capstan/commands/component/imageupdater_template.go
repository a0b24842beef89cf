package component

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/imageupdater/writeback"
)

// newImageUpdaterTemplateCommand renders a commit message template with
// sample changes, as Argo CD Image Updater's template command does.
func newImageUpdaterTemplateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "template [PATH]",
		Short: "Render a commit message template with sample changes (the default message without PATH)",
		Long: "Render a Git write-back commit message template as the updater renders it, for an\n" +
			"Application example-app whose two images changed, so a template can be checked before\n" +
			"it goes into argocd-image-updater-config (git.commit-message-template) or an\n" +
			"Application's git.commit-message annotation.",
		Example: "  capstan image-updater template\n  capstan image-updater template commit.tmpl",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := writeback.DefaultCommitMessage
			if len(args) == 1 {
				data, err := cmdutil.ReadBounded(args[0])
				if err != nil {
					return err
				}
				text = string(data)
			}
			changes := []writeback.Change{
				{Name: "gcr.io/example/example", OldTag: "1.0.0", NewTag: "1.0.1"},
				{Name: "gcr.io/example/updater", OldTag: "1.4.0", NewTag: "1.5.0",
					Digest: "sha256:7aa7a5359173d05b63cfd682e3c38487f3cb4f7f1d60659fe59fab1505977d4c"},
			}
			out, err := writeback.Render(text, "example-app", changes)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
}
