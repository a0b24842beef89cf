package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/apiclient"
)

func newReloginCommand(f *clientFlags) *cobra.Command {
	var password string
	var ssoPort int
	var launch bool
	var callback string
	cmd := &cobra.Command{
		Use:     "relogin",
		Short:   "Log in again to the current context's server as the same user",
		Example: "  capstan relogin --password \"$PASSWORD\"\n  capstan relogin   # after an SSO session expired",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := apiclient.Load(f.config)
			if err != nil {
				return err
			}
			s, token, err := cfg.Context(f.context)
			if err != nil {
				return err
			}
			name := cmp.Or(f.context, cfg.CurrentContext)
			claims, err := readClaims(token)
			if err != nil {
				return err
			}
			subject := claims.Subject
			if !claims.local() {
				ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
				defer cancel()
				if token, err = ssoLogin(ctx, s, ssoPort, callback, launch, cmd.OutOrStdout()); err != nil {
					return fmt.Errorf("SSO login to %s: %w", s.Server, err)
				}
			} else {
				if password == "" {
					return errors.New("--password is required to log in again as " + subject)
				}
				c, err := apiclient.Connect(s, "", f.conn)
				if err != nil {
					return err
				}
				var resp struct{ Token string }
				username, _, _ := strings.Cut(subject, ":")
				if err := c.Do(cmd.Context(), "POST", "/api/v1/session", map[string]string{"username": username, "password": password}, &resp); err != nil {
					return fmt.Errorf("logging in to %s: %w", s.Server, err)
				}
				token = resp.Token
			}
			cfg.Upsert(name, s, token)
			if err := cfg.Save(f.config); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Context '%s' updated\n", name)
			return nil
		},
	}
	cmd.Flags().StringVar(&password, "password", "", "the account's password")
	cmd.Flags().IntVar(&ssoPort, "sso-port", 8085, "localhost port the browser returns to after an SSO login")
	cmd.Flags().BoolVar(&launch, "sso-launch-browser", true, "open the browser for an SSO login (otherwise only print the address)")
	cmd.Flags().StringVar(&callback, "callback", "", "scheme, host and port the provider sends the browser back to after an SSO login (default http://localhost:--sso-port)")
	return cmd
}

func newConfigureCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "configure",
		Short:   "Change the CLI's local settings",
		Example: "  capstan configure --prompts-enabled\n  capstan configure --prompts-enabled=false",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return editConfig(f, func(cfg *apiclient.Config) error {
				cfg.PromptsEnabled = f.promptsEnabled
				fmt.Fprintf(cmd.OutOrStdout(), "Successfully updated the following configuration settings:\nprompts-enabled: %t\n", f.promptsEnabled)
				return nil
			})
		},
	}
	return cmd
}
