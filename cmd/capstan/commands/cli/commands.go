// Package cli holds the commands that talk to an API server as Argo CD's
// CLI does (app, proj, repo, cluster, account, cert, gpg, appset, login
// and the rest), with Argo CD's global client flags, its configuration
// file and its --core mode, which starts an API server in-process.
package cli

import (
	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/apiclient"
)

// AddCommands puts the client commands and Argo CD's global client flags
// on root. With argocdConfig, the configuration file is Argo CD's own, as
// when the binary runs as argocd. It returns what releases the resources
// the commands held once they have run (--core's server and render cache).
func AddCommands(root *cobra.Command, argocdConfig bool) (release func()) {
	cf := &clientFlags{}
	if argocdConfig {
		cf.defaultConfig = apiclient.ArgoCDPath()
	}
	cf.add(root)
	root.AddCommand(newLoginCommand(cf), newLogoutCommand(cf), newContextCommand(cf), newReloginCommand(cf))
	for _, group := range []*cobra.Command{newVersionCommand(cf), newAppCommand(cf), newRepoCommand(cf, false), newRepoCommand(cf, true), newClusterCommand(cf),
		newProjCommand(cf), newAccountCommand(cf), newCertCommand(cf), newGPGCommand(cf), newConfigureCommand(cf), newApplicationSetCommand(cf)} {
		root.AddCommand(cmdutil.WithKubeFlags(group))
	}
	return cf.release
}
