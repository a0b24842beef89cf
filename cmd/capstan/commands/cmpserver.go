package commands

import (
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
