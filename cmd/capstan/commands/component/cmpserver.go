package component

import (
	"cmp"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/repo/render/plugin"
)

// cmpServerEnv are the variables Argo CD's plugin sidecars read.
var cmpServerEnv = map[string]string{
	"loglevel":  "ARGOCD_CMP_SERVER_LOGLEVEL",
	"logformat": "ARGOCD_CMP_SERVER_LOGFORMAT",
}

// newCMPServerCommand is a config management plugin's sidecar server:
// Argo CD's install copies its binary into the shared /var/run/argocd as
// argocd-cmp-server, and each plugin sidecar runs it there, so existing
// sidecar definitions work with Capstan's image unchanged.
func newCMPServerCommand() *cobra.Command {
	var configDir string
	lf := &logFlags{}
	cmd := &cobra.Command{
		Use:     "cmp-server",
		Example: "  capstan cmp-server --config-dir-path /home/argocd/cmp-server/config   # in a plugin sidecar, as argocd-cmp-server",
		Short:   "Serve a config management plugin (plugin.yaml) to the repo server over its Unix socket",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := lf.logger()
			if err != nil {
				return err
			}
			config, err := plugin.ReadConfig(configDir)
			if err != nil {
				return err
			}
			opts := plugin.ServeOptions{Config: config, SocketDir: os.Getenv("ARGOCD_PLUGINSOCKFILEPATH"), Log: log}
			if dir := os.Getenv("ARGOCD_CMP_WORKDIR"); dir != "" {
				opts.WorkDir = filepath.Join(dir, "_cmp_server")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return plugin.Serve(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&configDir, "config-dir-path", plugin.DefaultConfigDir, "directory of the plugin's "+plugin.ConfigFile)
	lf.add(cmd)
	bindEnv(cmd, cmpServerEnv)
	return cmd
}

// newGitAskPassCommand is git's GIT_ASKPASS in a plugin sidecar whose
// plugin.yaml sets provideGitCreds: run as argocd with
// ARGOCD_BINARY_NAME=argocd-git-ask-pass (the environment the repo server
// gives the plugin's commands), it asks the repo server's ask-pass socket
// for the render's credentials and prints the one git asks for.
func newGitAskPassCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "git-ask-pass QUESTION",
		Example: "  GIT_ASKPASS=argocd ARGOCD_BINARY_NAME=argocd-git-ask-pass git fetch   # set up by the repo server, not by hand",
		Short:   "Answer git's username and password questions from the repo server (argocd-git-ask-pass)",
		Hidden:  true,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			socket := cmp.Or(os.Getenv(plugin.AskPassSocketEnv), plugin.DefaultAskPassSocket)
			answer, err := plugin.AskPassAnswer(cmd.Context(), socket, os.Getenv(plugin.AskPassNonceEnv), args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), answer)
			return err
		},
	}
}
