package commands

import (
	"cmp"
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/apiclient"
)

// clientFlags are Argo CD's global client flags.
type clientFlags struct {
	// defaultConfig is the --config default: Capstan's, or Argo CD's when
	// the binary runs as argocd.
	defaultConfig string
	config        string
	server        string
	authToken     string
	insecure      bool
	plaintext     bool
	grpcWeb       bool
}

func (f *clientFlags) add(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.config, "config", cmp.Or(f.defaultConfig, apiclient.DefaultPath()), "path to the CLI configuration (servers, users, contexts)")
	cmd.PersistentFlags().StringVar(&f.server, "server", "", "API server address (default: the current context's)")
	cmd.PersistentFlags().StringVar(&f.authToken, "auth-token", "", "token to authenticate with (default: the current context's)")
	cmd.PersistentFlags().BoolVar(&f.insecure, "insecure", false, "skip verifying the server's TLS certificate")
	cmd.PersistentFlags().BoolVar(&f.plaintext, "plaintext", false, "talk plain HTTP, no TLS")
	cmd.PersistentFlags().BoolVar(&f.grpcWeb, "grpc-web", false, "carry the calls over the gRPC API with gRPC-Web, for proxies that pass nothing else")
}

// client returns an API client from the flags, falling back to the
// current context.
func (f *clientFlags) client() (*apiclient.Client, error) {
	if f.server != "" {
		return apiclient.New(apiclient.Server{Server: f.server, Insecure: f.insecure, PlainText: f.plaintext, GRPCWeb: f.grpcWeb}, f.authToken), nil
	}
	cfg, err := apiclient.Load(f.config)
	if err != nil {
		return nil, err
	}
	s, token, err := cfg.Current()
	if err != nil {
		return nil, err
	}
	if f.authToken != "" {
		token = f.authToken
	}
	s.GRPCWeb = s.GRPCWeb || f.grpcWeb
	return apiclient.New(s, token), nil
}

func newLoginCommand(f *clientFlags) *cobra.Command {
	var username, password, name string
	var sso, launchBrowser bool
	var ssoPort int
	cmd := &cobra.Command{
		Use: "login SERVER",
		Example: "  capstan login capstan.example.com --username admin --password \"$PASSWORD\"\n" +
			"  capstan login capstan.example.com --sso\n  capstan login localhost:8080 --insecure",
		Short: "Log in to an API server and save the session as the current context",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := apiclient.Server{Server: args[0], Insecure: f.insecure, PlainText: f.plaintext, GRPCWeb: f.grpcWeb}
			var resp struct {
				Token string `json:"token"`
			}
			if sso {
				ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
				defer cancel()
				token, err := ssoLogin(ctx, s, ssoPort, launchBrowser, cmd.OutOrStdout())
				if err != nil {
					return fmt.Errorf("SSO login to %s: %w", args[0], err)
				}
				resp.Token, username = token, "SSO user"
			} else if err := apiclient.New(s, "").Do("POST", "/api/v1/session", map[string]string{"username": username, "password": password}, &resp); err != nil {
				return fmt.Errorf("logging in to %s: %w", args[0], err)
			}
			cfg, err := apiclient.Load(f.config)
			if err != nil {
				return err
			}
			if name == "" {
				name = args[0]
			}
			cfg.Upsert(name, s, resp.Token)
			if err := cfg.Save(f.config); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "'%s' logged in successfully\nContext '%s' updated\n", username, name)
			return nil
		},
	}
	cmd.Flags().StringVar(&username, "username", "admin", "account to log in as")
	cmd.Flags().StringVar(&password, "password", "", "the account's password")
	cmd.Flags().StringVar(&name, "name", "", "name of the context (default: the server)")
	cmd.Flags().BoolVar(&sso, "sso", false, "log in through the server's OIDC provider in a browser")
	cmd.Flags().IntVar(&ssoPort, "sso-port", 8085, "localhost port the browser returns to after an SSO login")
	cmd.Flags().BoolVar(&launchBrowser, "sso-launch-browser", true, "open the browser for an SSO login (otherwise only print the address)")
	return cmd
}

func newLogoutCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "logout [CONTEXT]",
		Example: "  capstan logout\n  capstan logout staging",
		Short:   "Forget the session token of a context (default: the current one)",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editConfig(f, func(cfg *apiclient.Config) error {
				return cfg.Logout(append(args, "")[0])
			})
		},
	}
}

func newContextCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "context [NAME]",
		Example: "  capstan context            # list contexts, * marks the current one\n  capstan context staging    # switch",
		Short:   "List the contexts, or switch to one",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return editConfig(f, func(cfg *apiclient.Config) error { return cfg.Use(args[0]) })
			}
			cfg, err := apiclient.Load(f.config)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER")
			for _, c := range cfg.Contexts {
				mark := ""
				if c.Name == cfg.CurrentContext {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Name, c.Server)
			}
			return tw.Flush()
		},
	}
}

// editConfig loads the CLI configuration, changes it and saves it.
func editConfig(f *clientFlags, change func(*apiclient.Config) error) error {
	cfg, err := apiclient.Load(f.config)
	if err != nil {
		return err
	}
	if err := change(cfg); err != nil {
		return err
	}
	return cfg.Save(f.config)
}

// withClient makes a command's RunE from a function that needs an API
// client from the global flags.
func (f *clientFlags) withClient(run func(cmd *cobra.Command, args []string, c *apiclient.Client) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := f.client()
		if err != nil {
			return err
		}
		return run(cmd, args, c)
	}
}
