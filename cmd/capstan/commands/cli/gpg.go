package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/settings"
)

func newGPGCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "gpg", Short: "Manage the GPG public keys commit signatures are verified with"}
	cmd.AddCommand(newGPGListCommand(f), newGPGGetCommand(f), newGPGAddCommand(f), newGPGRmCommand(f))
	return cmd
}

func newGPGListCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the configured GPG public keys",
		Example: "  capstan gpg list\n  capstan gpg list -o json",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			var list apiwire.GPGKeyList
			if err := c.Do(cmd.Context(), "GET", "/api/v1/gpgkeys", nil, &list); err != nil {
				return fmt.Errorf("listing GPG keys: %w", err)
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), list.Items, output)
			}
			printGPGKeys(cmd.OutOrStdout(), list.Items)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: json, yaml or wide")
	return cmd
}

func printGPGKeys(w io.Writer, keys []settings.GPGKey) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEYID\tTYPE\tIDENTITY")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.KeyID, strings.ToUpper(k.SubType), k.Owner)
	}
	_ = tw.Flush()
}

func newGPGGetCommand(f *clientFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "get KEYID",
		Short:   "Show a GPG public key and its data",
		Example: "  capstan gpg get 4AEE18F83AFDEB23\n  capstan gpg get 4AEE18F83AFDEB23 -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			var key settings.GPGKey
			if err := c.Do(cmd.Context(), "GET", apiclient.PathOf("/api/v1/gpgkeys/{keyID}", args[0]), nil, &key); err != nil {
				return fmt.Errorf("getting GPG key %s: %w", args[0], err)
			}
			if output != "wide" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), key, output)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Key ID:          %s\n", key.KeyID)
			fmt.Fprintf(w, "Key fingerprint: %s\n", key.Fingerprint)
			fmt.Fprintf(w, "Key subtype:     %s\n", strings.ToUpper(key.SubType))
			fmt.Fprintf(w, "Key owner:       %s\n", key.Owner)
			fmt.Fprintf(w, "Key data follows until EOF:\n%s\n", key.KeyData)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: json, yaml or wide")
	return cmd
}

func newGPGAddCommand(f *clientFlags) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:     "add",
		Short:   "Add the GPG public keys of an ASCII-armored file",
		Example: "  capstan gpg add --from jane.asc",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			if from == "" {
				return errors.New("--from is mandatory")
			}
			data, err := readInput(cmd, from, "GPG public keys", "")
			if err != nil {
				return err
			}
			var resp apiwire.GPGKeysCreated
			if err := c.Do(cmd.Context(), "POST", "/api/v1/gpgkeys", settings.GPGKey{KeyData: string(data)}, &resp); err != nil {
				return fmt.Errorf("adding GPG keys from %s: %w", from, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created %d key(s) from input file", len(resp.Created.Items))
			if len(resp.Skipped) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ", and %d key(s) were skipped because they exist already", len(resp.Skipped))
			}
			fmt.Fprintln(cmd.OutOrStdout(), ".")
			return nil
		}),
	}
	cmd.Flags().StringVarP(&from, "from", "f", "", "file with the GPG public keys to import")
	return cmd
}

func newGPGRmCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rm KEYID",
		Short:   "Remove a GPG public key",
		Example: "  capstan gpg rm 4AEE18F83AFDEB23",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			if !f.confirm(cmd, false, fmt.Sprintf("Are you sure you want to remove key with key ID '%s'? [y/n] ", args[0])) {
				fmt.Fprintf(cmd.OutOrStdout(), "The command to delete key with key ID '%s' was cancelled.\n", args[0])
				return nil
			}
			if err := c.Do(cmd.Context(), "DELETE", apiclient.Path("/api/v1/gpgkeys").With(url.Values{"keyID": {args[0]}}), nil, nil); err != nil {
				return fmt.Errorf("removing GPG key %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted key with key ID %s\n", args[0])
			return nil
		}),
	}
}
