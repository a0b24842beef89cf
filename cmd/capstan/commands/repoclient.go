package commands

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/repo/reposerver"
)

// defaultAppConfigPath is where Argo CD's install mounts a component's
// certificates (argocd-repo-server-tls and others); ARGOCD_APP_CONFIG_PATH
// moves it, as it does for Argo CD.
const defaultAppConfigPath = "/app/config"

// appConfigDir is the directory sub of the mounted configuration.
func appConfigDir(sub string) string {
	root := os.Getenv("ARGOCD_APP_CONFIG_PATH")
	if root == "" {
		root = defaultAppConfigPath
	}
	return filepath.Join(root, sub)
}

// repoClientFlags say how the API server or the controller reaches the
// repo server.
type repoClientFlags struct {
	addr      string
	plaintext bool
	strict    bool
	// caDir is where the component finds argocd-repo-server-tls mounted:
	// server/tls or controller/tls under the configuration path.
	caDir string
}

func (f *repoClientFlags) add(cmd *cobra.Command, caDir string) {
	f.caDir = caDir
	cmd.Flags().StringVar(&f.addr, "repo-server", "argocd-repo-server:8081", "repo server address")
	cmd.Flags().BoolVar(&f.plaintext, "repo-server-plaintext", false, "reach the repo server without TLS (one started with --disable-tls)")
	cmd.Flags().BoolVar(&f.strict, "repo-server-strict-tls", false,
		"verify the repo server's certificate against argocd-repo-server-tls as mounted under "+filepath.Join(defaultAppConfigPath, caDir))
}

// dial connects to the repo server.
func (f *repoClientFlags) dial() (*reposerver.Client, error) {
	return reposerver.Dial(f.addr, reposerver.ClientTLS{Plaintext: f.plaintext, Strict: f.strict, CADir: appConfigDir(f.caDir)})
}
