package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
)

func newAccountGetCommand(f *clientFlags) *cobra.Command {
	var account, output string
	cmd := &cobra.Command{
		Use:     "get",
		Short:   "Show an account: whether it is enabled, its capabilities and its tokens",
		Example: "  capstan account get\n  capstan account get --account ci -o json",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			if account == "" {
				var info apiwire.UserInfo
				if err := c.Do(cmd.Context(), "GET", "/api/v1/session/userinfo", nil, &info); err != nil {
					return fmt.Errorf("reading user info: %w", err)
				}
				account = info.Username
			}
			var a apiwire.Account
			if err := c.Do(cmd.Context(), "GET", apiclient.PathOf("/api/v1/account/{name}", account), nil, &a); err != nil {
				return fmt.Errorf("getting account %s: %w", account, err)
			}
			if output != "" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), a, output)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "NAME:          %s\nENABLED:       %t\nCAPABILITIES:  %s\n\nTOKENS:\n", a.Name, a.Enabled, strings.Join(a.Capabilities, ", "))
			if len(a.Tokens) == 0 {
				fmt.Fprintln(w, "NONE")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tISSUED AT\tEXPIRING AT")
			for _, t := range a.Tokens {
				expires := "never"
				if t.ExpiresAt > 0 {
					expires = time.Unix(t.ExpiresAt, 0).UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, time.Unix(t.IssuedAt, 0).UTC().Format(time.RFC3339), expires)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVarP(&account, "account", "a", "", "account (default: yourself)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: text)")
	return cmd
}

func newAccountBcryptCommand() *cobra.Command {
	var password string
	cmd := &cobra.Command{
		Use:     "bcrypt",
		Short:   "Print the bcrypt hash of a password, for argocd-secret's admin.password or accounts.<name>.password",
		Example: "  capstan account bcrypt --password 'a-long-password'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if password == "" {
				return errors.New("--password is required")
			}
			hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(hash))
			return nil
		},
	}
	cmd.Flags().StringVar(&password, "password", "", "the password")
	return cmd
}
