package commands

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/version"
)

// clientVersion is the shape of `version -o json`: Argo CD nests the CLI's
// build under "client" and the server's under "server".
type clientVersion struct {
	Client version.Info `json:"client"`
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Example: "  capstan version\n  capstan version -o json",
		Short:   "Print version information",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), version.Get(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, short or json")
	return cmd
}

func printVersion(w io.Writer, info version.Info, output string) error {
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(clientVersion{Client: info})
	case "short":
		_, err := fmt.Fprintf(w, "capstan: %s\n", info)
		return err
	case "wide", "":
		_, err := fmt.Fprintf(w, "capstan: %s\n  BuildDate: %s\n  GitCommit: %s\n  GitTreeState: %s\n  GoVersion: %s\n  Compiler: %s\n  Platform: %s\n",
			info, info.BuildDate, info.GitCommit, info.GitTreeState, info.GoVersion, info.Compiler, info.Platform)
		return err
	default:
		return fmt.Errorf("unknown output format %q: use wide, short or json", output)
	}
}
