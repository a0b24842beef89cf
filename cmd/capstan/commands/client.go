package commands

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

// clientFlags are Argo CD's global client flags.
type clientFlags struct {
	config    string
	server    string
	authToken string
	insecure  bool
	plaintext bool
}

func (f *clientFlags) add(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.config, "config", apiclient.DefaultPath(), "path to the CLI configuration (servers, users, contexts)")
	cmd.PersistentFlags().StringVar(&f.server, "server", "", "API server address (default: the current context's)")
	cmd.PersistentFlags().StringVar(&f.authToken, "auth-token", "", "token to authenticate with (default: the current context's)")
	cmd.PersistentFlags().BoolVar(&f.insecure, "insecure", false, "skip verifying the server's TLS certificate")
	cmd.PersistentFlags().BoolVar(&f.plaintext, "plaintext", false, "talk plain HTTP, no TLS")
}

// client returns an API client from the flags, falling back to the
// current context.
func (f *clientFlags) client() (*apiclient.Client, error) {
	if f.server != "" {
		return apiclient.New(apiclient.Server{Server: f.server, Insecure: f.insecure, PlainText: f.plaintext}, f.authToken), nil
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
	return apiclient.New(s, token), nil
}

func newLoginCommand(f *clientFlags) *cobra.Command {
	var username, password, name string
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to an API server and save the session as the current context",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := apiclient.Server{Server: args[0], Insecure: f.insecure, PlainText: f.plaintext}
			var resp struct {
				Token string `json:"token"`
			}
			if err := apiclient.New(s, "").Do("POST", "/api/v1/session", map[string]string{"username": username, "password": password}, &resp); err != nil {
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
	return cmd
}

func newLogoutCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "logout [CONTEXT]",
		Short: "Forget the session token of a context (default: the current one)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editConfig(f, func(cfg *apiclient.Config) error {
				return cfg.Logout(append(args, "")[0])
			})
		},
	}
}

func newContextCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "context [NAME]",
		Short: "List the contexts, or switch to one",
		Args:  cobra.MaximumNArgs(1),
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

func newAppCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "app", Short: "Manage Applications through the API server"}
	var output string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the Applications you may see",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			var apps v1alpha1.ApplicationList
			if err := c.Do("GET", "/api/v1/applications", nil, &apps); err != nil {
				return fmt.Errorf("listing applications: %w", err)
			}
			return printApps(cmd.OutOrStdout(), apps.Items, output)
		},
	}
	list.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, name or json")

	var getOutput string
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one Application",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			var app v1alpha1.Application
			if err := c.Do("GET", "/api/v1/applications/"+url.PathEscape(args[0]), nil, &app); err != nil {
				return fmt.Errorf("getting application %s: %w", args[0], err)
			}
			return printApps(cmd.OutOrStdout(), []v1alpha1.Application{app}, getOutput)
		},
	}
	get.Flags().StringVarP(&getOutput, "output", "o", "wide", "output format: wide, name or json")

	var revision string
	var prune, dryRun bool
	sync := &cobra.Command{
		Use:   "sync NAME",
		Short: "Start a sync of an Application",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body := map[string]any{"revision": revision, "prune": prune, "dryRun": dryRun}
			if err := c.Do("POST", "/api/v1/applications/"+url.PathEscape(args[0])+"/sync", body, nil); err != nil {
				return fmt.Errorf("syncing application %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sync of %s started\n", args[0])
			return nil
		},
	}
	sync.Flags().StringVar(&revision, "revision", "", "revision to sync to (default: the target revision)")
	sync.Flags().BoolVar(&prune, "prune", false, "delete resources no longer in Git")
	sync.Flags().BoolVar(&dryRun, "dry-run", false, "show what a sync would do without doing it")

	var cascade bool
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an Application (and, with --cascade, its resources)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			path := fmt.Sprintf("/api/v1/applications/%s?cascade=%t", url.PathEscape(args[0]), cascade)
			if err := c.Do("DELETE", path, nil, nil); err != nil {
				return fmt.Errorf("deleting application %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application '%s' deleted\n", args[0])
			return nil
		},
	}
	del.Flags().BoolVar(&cascade, "cascade", true, "delete the Application's resources too")
	cmd.AddCommand(list, get, sync, del)
	return cmd
}

// printApps prints Applications as Argo CD's app list does.
func printApps(w io.Writer, apps []v1alpha1.Application, output string) error {
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(apps)
	case "name":
		for _, a := range apps {
			fmt.Fprintln(w, a.Namespace+"/"+a.Name)
		}
		return nil
	case "wide", "":
	default:
		return fmt.Errorf("unknown output format %q (want wide, name or json)", output)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLUSTER\tNAMESPACE\tPROJECT\tSTATUS\tHEALTH\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET")
	for _, a := range apps {
		policy := "Manual"
		if p := a.Spec.SyncPolicy; p != nil && p.Automated != nil {
			policy = "Auto"
			if p.Automated.Prune {
				policy = "Auto-Prune"
			}
		}
		var conds []string
		for _, c := range a.Status.Conditions {
			conds = append(conds, string(c.Type))
		}
		var src v1alpha1.ApplicationSource
		if a.Spec.Source != nil {
			src = *a.Spec.Source
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Namespace, a.Name,
			cmp.Or(a.Spec.Destination.Server, a.Spec.Destination.Name), a.Spec.Destination.Namespace, a.Spec.Project,
			a.Status.Sync.Status, a.Status.Health.Status, policy, cmp.Or(strings.Join(conds, ","), "<none>"), src.RepoURL, src.Path, src.TargetRevision)
	}
	return tw.Flush()
}
