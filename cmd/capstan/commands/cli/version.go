package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/version"
)

// clientVersion is the shape of `version -o json`: Argo CD nests the CLI's
// build under "client" and the server's under "server".
type clientVersion struct {
	Client version.Info  `json:"client"`
	Server *version.Info `json:"server,omitempty"`
}

func newVersionCommand(f *clientFlags) *cobra.Command {
	var output string
	var clientOnly, short bool
	cmd := &cobra.Command{
		Use:     "version",
		Example: "  capstan version\n  capstan version --client -o json\n  capstan version --short",
		Short:   "Print the CLI's version and, when a server is configured, the server's",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := clientVersion{Client: version.Get()}
			if !clientOnly && f.hasServer() {
				c, err := f.client()
				if err != nil {
					return err
				}
				v.Server = &version.Info{}
				if err := c.Do(cmd.Context(), "GET", "/api/version", nil, v.Server); err != nil {
					return fmt.Errorf("getting the server's version: %w", err)
				}
			}
			if short && output == "wide" {
				output = "short"
			}
			return printVersion(cmd.OutOrStdout(), cmd.Root().Name(), v, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, short, json or yaml")
	cmd.Flags().BoolVar(&clientOnly, "client", false, "only the CLI's version; do not ask the server")
	cmd.Flags().BoolVar(&short, "short", false, "versions only, no build details")
	return cmd
}

func printVersion(w io.Writer, program string, v clientVersion, output string) error {
	switch output {
	case "json", "yaml":
		return cmdutil.PrintObject(w, v, output)
	case "short":
		fmt.Fprintf(w, "%s: %s\n", program, v.Client)
		if v.Server != nil {
			fmt.Fprintf(w, "%s-server: %s\n", program, v.Server.Version)
		}
		return nil
	case "wide", "":
		printBuild(w, program, v.Client, v.Client.String())
		if v.Server != nil {
			printBuild(w, program+"-server", *v.Server, v.Server.Version)
		}
		return nil
	default:
		return fmt.Errorf("unknown output format %q: use wide, short, json or yaml", output)
	}
}

func printBuild(w io.Writer, name string, info version.Info, v string) {
	fmt.Fprintf(w, "%s: %s\n  BuildDate: %s\n  GitCommit: %s\n  GitTreeState: %s\n  GoVersion: %s\n  Compiler: %s\n  Platform: %s\n",
		name, v, info.BuildDate, info.GitCommit, info.GitTreeState, info.GoVersion, info.Compiler, info.Platform)
}
