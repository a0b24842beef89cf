package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/apiwire"
)

// clientFlags are Argo CD's global client flags.
type clientFlags struct {
	// defaultConfig is the --config default: Capstan's, or Argo CD's when
	// the binary runs as argocd.
	defaultConfig   string
	config          string
	context         string
	server          string
	authToken       string
	insecure        bool
	plaintext       bool
	grpcWeb         bool
	grpcWebRootPath string
	promptsEnabled  bool
	conn            apiclient.Options
	logLevel        string
	logFormat       string
	// Core and port-forward mode reach Argo CD's components in the
	// cluster through the kubeconfig; these name them.
	core, portForward    bool
	portForwardNamespace string
	kubeContext          string
	componentNames       map[string]*string
	// What --core or --port-forward started for the first client; release
	// stops it.
	kubeOnce sync.Once
	kube     kubeAccess
}

// add puts the client flags on root, for every command.
func (f *clientFlags) add(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&f.config, "config", cmp.Or(f.defaultConfig, apiclient.DefaultPath()), "path to the CLI configuration (servers, users, contexts)")
	pf.StringVar(&f.context, "argocd-context", "", "the context of the configuration to use (default: the current one)")
	pf.StringVar(&f.server, "server", "", "API server address; set this or the ARGOCD_SERVER environment variable (default: the current context's)")
	pf.StringVar(&f.authToken, "auth-token", "", "token to authenticate with; set this or the ARGOCD_AUTH_TOKEN environment variable (default: the current context's)")
	pf.BoolVar(&f.insecure, "insecure", false, "skip verifying the server's TLS certificate")
	pf.BoolVar(&f.plaintext, "plaintext", false, "talk plain HTTP, no TLS")
	pf.BoolVar(&f.grpcWeb, "grpc-web", false, "carry the calls over the gRPC API with gRPC-Web, for proxies that pass nothing else")
	pf.StringVar(&f.grpcWebRootPath, "grpc-web-root-path", "", "path the server is served under behind a reverse proxy (implies --grpc-web)")
	pf.StringSliceVarP(&f.conn.Headers, "header", "H", nil, "extra header for every request, as 'Name: value' (repeatable)")
	pf.StringVar(&f.conn.ClientCert, "client-crt", "", "file of a TLS client certificate to present")
	pf.StringVar(&f.conn.ClientKey, "client-crt-key", "", "file of the TLS client certificate's key")
	pf.StringVar(&f.conn.ServerCA, "server-crt", "", "file of the certificate authorities the server's certificate is checked against")
	pf.IntVar(&f.conn.RetryMax, "http-retry-max", 0, "times to retry a request that did not reach the server")
	pf.BoolVar(&f.promptsEnabled, "prompts-enabled", false, "ask before destructive actions (default: the configuration's prompts-enabled)")
	pf.StringVar(&f.logLevel, "loglevel", "info", "log level: debug, info, warn or error")
	pf.StringVar(&f.logFormat, "logformat", "json", "log format: json or text")
	pf.BoolVar(&f.core, "core", false, "reach the install through the kubeconfig (--kube-context) instead of an API server")
	pf.BoolVar(&f.portForward, "port-forward", false, "reach the API server through a port forward to its pod (app.kubernetes.io/name=--server-name)")
	pf.StringVar(&f.portForwardNamespace, "port-forward-namespace", "", "namespace of the API server's pod for --port-forward (default: the kubeconfig's)")
	pf.StringVar(&f.kubeContext, "kube-context", "", "kubeconfig context for --core and --port-forward")
	f.componentNames = map[string]*string{}
	for flag, def := range map[string]string{"server-name": "argocd-server", "repo-server-name": "argocd-repo-server", "controller-name": "argocd-application-controller",
		"redis-name": "argocd-redis", "redis-haproxy-name": "argocd-redis-ha-haproxy", "redis-compress": "gzip"} {
		v := new(string)
		f.componentNames[flag] = v
		pf.StringVar(v, flag, def, "for --core and --port-forward: "+strings.ReplaceAll(flag, "-", " ")+" of Argo CD's install")
	}
	envErr := applyEnvDefaults(pf)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		cmdutil.NoteNoEffect(cmd)
		return f.setLogging(cmd)
	}
}

// setLogging checks --loglevel and --logformat and, in a process of its
// own (stderr is the process's), makes the default logger write that
// format at that level to stderr. Run in-process (tests, embedding), it
// leaves the process's logger alone.
func (f *clientFlags) setLogging(cmd *cobra.Command) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("--loglevel: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch f.logFormat {
	case "json":
		h = slog.NewJSONHandler(os.Stderr, opts)
	case "text":
		h = slog.NewTextHandler(os.Stderr, opts)
	default:
		return fmt.Errorf("--logformat %q: use json or text", f.logFormat)
	}
	if cmd.ErrOrStderr() == os.Stderr {
		slog.SetDefault(slog.New(h))
	}
	return nil
}

// confirm asks question on the terminal when prompts are enabled (by
// --prompts-enabled or the configuration) and yes is not set; it reports
// whether to go ahead.
func (f *clientFlags) confirm(cmd *cobra.Command, yes bool, question string) bool {
	enabled := f.promptsEnabled
	if cfg, err := apiclient.Load(f.config); err == nil && !cmd.Flags().Changed("prompts-enabled") {
		enabled = cfg.PromptsEnabled
	}
	if yes || !enabled {
		return true
	}
	fmt.Fprint(cmd.OutOrStdout(), question)
	var answer string
	_, _ = fmt.Fscanln(cmd.InOrStdin(), &answer)
	return strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes")
}

// hasServer reports whether the flags or the configuration name a server.
func (f *clientFlags) hasServer() bool {
	if f.server != "" || os.Getenv(envServer) != "" || f.core || f.portForward || f.portForwardNamespace != "" {
		return true
	}
	cfg, err := apiclient.Load(f.config)
	return err == nil && cfg.CurrentContext != ""
}

// client returns an API client from the flags, falling back to the
// current context.
func (f *clientFlags) client() (*apiclient.Client, error) {
	if f.core {
		return f.kubeClient(true, "")
	}
	server, token := cmp.Or(f.server, os.Getenv(envServer)), cmp.Or(f.authToken, os.Getenv(envAuthToken))
	forward := f.portForward || f.portForwardNamespace != ""
	if server != "" && !forward {
		s := apiclient.Server{Server: server, Insecure: f.insecure, PlainText: f.plaintext, GRPCWeb: f.grpcWeb, GRPCWebRootPath: f.grpcWebRootPath}
		return apiclient.Connect(s, token, f.conn)
	}
	cfg, err := apiclient.Load(f.config)
	if err != nil {
		return nil, err
	}
	saved, savedToken, err := cfg.Context(f.context)
	if err != nil && !forward {
		return nil, err
	}
	token = cmp.Or(token, savedToken)
	switch {
	case forward || saved.Server == apiclient.PortForwardServer:
		return f.kubeClient(false, token)
	case saved.Core:
		return f.kubeClient(true, "")
	}
	saved.Insecure = saved.Insecure || f.insecure
	saved.PlainText = saved.PlainText || f.plaintext
	saved.GRPCWeb = saved.GRPCWeb || f.grpcWeb
	saved.GRPCWebRootPath = cmp.Or(f.grpcWebRootPath, saved.GRPCWebRootPath)
	return apiclient.Connect(saved, token, f.conn)
}

func newLoginCommand(f *clientFlags) *cobra.Command {
	var username, password, name, callback string
	var sso, launchBrowser, skipTestTLS bool
	var ssoPort int
	cmd := &cobra.Command{
		Use: "login SERVER",
		Example: "  capstan login capstan.example.com --username admin --password \"$PASSWORD\"\n" +
			"  capstan login capstan.example.com --sso\n  capstan login localhost:8080 --insecure\n" +
			"  capstan login --core   # no server: the kubeconfig's context reaches the install\n" +
			"  capstan login --port-forward --port-forward-namespace argocd --username admin --password \"$PASSWORD\"",
		Short: "Log in to an API server and save the session as the current context",
		Args:  cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.core {
				return saveCoreContext(cmd, f, cmp.Or(name, apiclient.CoreServer))
			}
			// What is saved, and where the login goes (with --port-forward,
			// through a forward that a later command makes anew).
			saved := apiclient.Server{Insecure: f.insecure, PlainText: f.plaintext, GRPCWeb: f.grpcWeb, GRPCWebRootPath: f.grpcWebRootPath}
			s := saved
			switch {
			case f.portForward || f.portForwardNamespace != "":
				saved.Server = apiclient.PortForwardServer
				var err error
				if s, err = f.viaKube(false); err != nil {
					return err
				}
			case len(args) == 0:
				return errors.New("name the server to log in to, or use --core or --port-forward")
			default:
				saved.Server, s.Server = args[0], args[0]
			}
			var resp apiwire.SessionToken
			if sso {
				ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
				defer cancel()
				token, err := ssoLogin(ctx, s, ssoPort, callback, launchBrowser, cmd.OutOrStdout())
				if err != nil {
					return fmt.Errorf("SSO login to %s: %w", saved.Server, err)
				}
				resp.Token, username = token, "SSO user"
			} else if c, err := apiclient.Connect(s, "", f.conn); err != nil {
				return err
			} else if err := c.Do(cmd.Context(), "POST", "/api/v1/session", map[string]string{"username": username, "password": password}, &resp); err != nil {
				return fmt.Errorf("logging in to %s: %w", saved.Server, err)
			}
			cfg, err := apiclient.Load(f.config)
			if err != nil {
				return err
			}
			name = cmp.Or(name, saved.Server)
			cfg.Upsert(name, saved, resp.Token)
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
	cmd.Flags().StringVar(&callback, "callback", "", "scheme, host and port the provider sends the browser back to after an SSO login (default http://localhost:--sso-port)")
	cmd.Flags().BoolVar(&skipTestTLS, "skip-test-tls", false, "do not probe whether the server speaks TLS (Capstan's CLI never probes: --plaintext says it does not)")
	return cmd
}

// saveCoreContext saves a context that reaches the install through the
// kubeconfig, as login --core does, and makes it the current one.
func saveCoreContext(cmd *cobra.Command, f *clientFlags, name string) error {
	err := editConfig(f, func(cfg *apiclient.Config) error {
		cfg.Upsert(name, apiclient.Server{Server: apiclient.CoreServer, Core: true}, "")
		return nil
	})
	if err == nil {
		fmt.Fprintf(cmd.OutOrStdout(), "Context '%s' updated\n", name)
	}
	return err
}

func newLogoutCommand(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "logout [CONTEXT]",
		Example: "  capstan logout\n  capstan logout staging",
		Short:   "End the session of a context on its server and forget its token (default: the current one)",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editConfig(f, func(cfg *apiclient.Config) error {
				name := append(args, "")[0]
				// As Argo CD's CLI: the server revokes the session first;
				// if it cannot be reached the token is forgotten anyway.
				if saved, token, err := cfg.Context(name); err == nil && token != "" && !saved.Core && saved.Server != apiclient.PortForwardServer {
					if c, err := apiclient.Connect(saved, token, f.conn); err == nil {
						if err := c.Logout(cmd.Context()); err != nil {
							fmt.Fprintf(cmd.ErrOrStderr(), "warning: the server did not end the session: %v\n", err)
						}
					}
				}
				return cfg.Logout(name)
			})
		},
	}
}

func newContextCommand(f *clientFlags) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:     "context [NAME]",
		Example: "  capstan context            # list contexts, * marks the current one\n  capstan context staging    # switch\n  capstan context staging --delete",
		Short:   "List the contexts, switch to one, or delete one",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case remove && len(args) == 0:
				return fmt.Errorf("name the context to delete")
			case remove:
				return editConfig(f, func(cfg *apiclient.Config) error { return cfg.Delete(args[0]) })
			case len(args) == 1:
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
	cmd.Flags().BoolVar(&remove, "delete", false, "delete the named context")
	return cmd
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
