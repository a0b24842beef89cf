package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
)

func newAccountCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "account", Short: "Manage local accounts, their passwords and API tokens"}

	var infoOutput, listOutput string
	userInfo := &cobra.Command{
		Use:     "get-user-info",
		Short:   "Show who you are logged in as",
		Example: "  capstan account get-user-info",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			var info apiwire.UserInfo
			if err := c.Do(cmd.Context(), "GET", "/api/v1/session/userinfo", nil, &info); err != nil {
				return fmt.Errorf("reading user info: %w", err)
			}
			if infoOutput != "" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), map[string]any{"loggedIn": info.LoggedIn, "username": info.Username, "iss": info.Issuer, "groups": info.Groups}, infoOutput)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged In: %t\n", info.LoggedIn)
			if info.LoggedIn {
				fmt.Fprintf(cmd.OutOrStdout(), "Username: %s\nIssuer: %s\nGroups: %s\n", info.Username, info.Issuer, strings.Join(info.Groups, ","))
			}
			return nil
		}),
	}

	list := &cobra.Command{
		Use:     "list",
		Short:   "List accounts",
		Example: "  capstan account list",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			var resp apiwire.AccountList
			if err := c.Do(cmd.Context(), "GET", "/api/v1/account", nil, &resp); err != nil {
				return fmt.Errorf("listing accounts: %w", err)
			}
			if listOutput != "" {
				return cmdutil.PrintObject(cmd.OutOrStdout(), resp.Items, listOutput)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tENABLED\tCAPABILITIES")
			for _, a := range resp.Items {
				fmt.Fprintf(tw, "%s\t%t\t%s\n", a.Name, a.Enabled, strings.Join(a.Capabilities, ", "))
			}
			return tw.Flush()
		}),
	}

	userInfo.Flags().StringVarP(&infoOutput, "output", "o", "", "output format: json or yaml (default: text)")
	list.Flags().StringVarP(&listOutput, "output", "o", "", "output format: json or yaml (default: a table)")

	var account, expiresIn, id string
	generateToken := &cobra.Command{
		Use:     "generate-token",
		Short:   "Issue an API token for an account with the apiKey capability (printed once)",
		Example: "  capstan account generate-token --account image-updater --id updater\n  capstan account generate-token --expires-in 24h",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			secs, err := durationSeconds(expiresIn)
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			name, err := accountOrSelf(cmd.Context(), c, account)
			if err != nil {
				return err
			}
			var resp struct{ Token string }
			if err := c.Do(cmd.Context(), "POST", apiclient.PathOf("/api/v1/account/{name}/token", name), map[string]any{"expiresIn": secs, "id": id}, &resp); err != nil {
				return fmt.Errorf("generating a token for %s: %w", name, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), resp.Token)
			return nil
		},
	}
	generateToken.Flags().StringVarP(&account, "account", "a", "", "account (default: yourself)")
	generateToken.Flags().StringVarP(&expiresIn, "expires-in", "e", "0s", "lifetime, such as 24h (0s: never expires)")
	generateToken.Flags().StringVarP(&id, "id", "i", "", "token id (default: generated)")

	var deleteAccount string
	deleteToken := &cobra.Command{
		Use:     "delete-token ID",
		Short:   "Revoke an account's API token",
		Example: "  capstan account delete-token updater --account image-updater",
		Args:    cobra.ExactArgs(1),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			name, err := accountOrSelf(cmd.Context(), c, deleteAccount)
			if err != nil {
				return err
			}
			if err := c.Do(cmd.Context(), "DELETE", apiclient.PathOf("/api/v1/account/{name}/token/{id}", name, args[0]), nil, nil); err != nil {
				return fmt.Errorf("revoking token %s of %s: %w", args[0], name, err)
			}
			return nil
		}),
	}
	deleteToken.Flags().StringVarP(&deleteAccount, "account", "a", "", "account (default: yourself)")

	var pwAccount, current, newPassword string
	updatePassword := &cobra.Command{
		Use:     "update-password",
		Short:   "Change your password (or, with --account and the right, another account's)",
		Example: "  capstan account update-password --current-password \"$OLD\" --new-password \"$NEW\"",
		Args:    cobra.NoArgs,
		RunE: f.withClient(func(cmd *cobra.Command, _ []string, c *apiclient.Client) error {
			body := map[string]string{"name": pwAccount, "currentPassword": current, "newPassword": newPassword}
			if err := c.Do(cmd.Context(), "PUT", "/api/v1/account/password", body, nil); err != nil {
				return fmt.Errorf("updating the password: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Password updated")
			return nil
		}),
	}
	updatePassword.Flags().StringVar(&pwAccount, "account", "", "account (default: yourself)")
	updatePassword.Flags().StringVar(&current, "current-password", "", "your current password")
	updatePassword.Flags().StringVar(&newPassword, "new-password", "", "the new password (it must match argocd-cm passwordPattern: 8 to 32 characters by default)")

	canI := &cobra.Command{
		Use:     "can-i ACTION RESOURCE OBJECT",
		Short:   "Ask whether you may do something; prints yes or no",
		Example: "  capstan account can-i sync applications 'team-a/*'\n  capstan account can-i update projects team-a",
		Args:    cobra.ExactArgs(3),
		RunE: f.withClient(func(cmd *cobra.Command, args []string, c *apiclient.Client) error {
			var resp struct{ Value string }
			path := apiclient.PathOf("/api/v1/account/can-i/{resource}/{action}/{object...}", args[1], args[0], args[2])
			if err := c.Do(cmd.Context(), "GET", path, nil, &resp); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), resp.Value)
			return nil
		}),
	}
	cmd.AddCommand(userInfo, list, generateToken, deleteToken, updatePassword, canI, newAccountGetCommand(f), newAccountBcryptCommand(), newAccountSessionTokenCommand(f))
	return cmd
}

// accountOrSelf returns name, or the logged-in user's when empty.
func accountOrSelf(ctx context.Context, c *apiclient.Client, name string) (string, error) {
	if name != "" {
		return name, nil
	}
	var info struct{ Username string }
	if err := c.Do(ctx, "GET", "/api/v1/session/userinfo", nil, &info); err != nil || info.Username == "" {
		return "", fmt.Errorf("cannot tell who you are logged in as; pass --account (%v)", err)
	}
	return info.Username, nil
}
