// Package component holds the commands that run Capstan's components as
// Argo CD's install runs its own: the application controller, the API
// server, the repo server and its render workers, the config management
// plugin server, Dex, the ApplicationSet and notifications controllers,
// the image updater, and capstan run, which starts them all in one process.
package component

import "github.com/spf13/cobra"

// Commands returns the component commands, to be added to the root.
func Commands() []*cobra.Command {
	return []*cobra.Command{newDexCommand(), newRepoServerCommand(), newRenderWorkerCommand(), newCMPServerCommand(), newGitAskPassCommand(),
		newControllerCommand(), newServerCommand(), newRunCommand(), newImageUpdaterCommand(), newApplicationSetControllerCommand(),
		newNotificationsControllerCommand()}
}
