package cmdutil

import (
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/capstan-cd/capstan/internal/repo/reposerver"
)

// DefaultAppConfigPath is where Argo CD's install mounts a component's
// certificates (argocd-repo-server-tls and others); ARGOCD_APP_CONFIG_PATH
// moves it, as it does for Argo CD.
const DefaultAppConfigPath = "/app/config"

// AppConfigDir is the directory sub of the mounted configuration.
func AppConfigDir(sub string) string {
	root := os.Getenv("ARGOCD_APP_CONFIG_PATH")
	if root == "" {
		root = DefaultAppConfigPath
	}
	return filepath.Join(root, sub)
}

// RepoClientFlags say how the API server or the controller reaches the
// repo server.
type RepoClientFlags struct {
	Addr      string
	Plaintext bool
	Strict    bool
	// CADir is where the component finds argocd-repo-server-tls mounted:
	// server/tls or controller/tls under the configuration path.
	CADir string
	// CACertPath, ClientCertPath and ClientKeyPath: see
	// reposerver.ClientTLS.
	CACertPath, ClientCertPath, ClientKeyPath string
	// TimeoutSeconds bounds each call to the repo server; 0 never.
	TimeoutSeconds int
}

// Add puts the flags on cmd; caDir is the mounted certificates' directory.
func (f *RepoClientFlags) Add(cmd *cobra.Command, caDir string) {
	f.CADir = caDir
	cmd.Flags().StringVar(&f.Addr, "repo-server", "argocd-repo-server:8081", "repo server address")
	cmd.Flags().BoolVar(&f.Plaintext, "repo-server-plaintext", false, "reach the repo server without TLS (one started with --disable-tls)")
	cmd.Flags().BoolVar(&f.Strict, "repo-server-strict-tls", false,
		"verify the repo server's certificate against argocd-repo-server-tls as mounted under "+filepath.Join(DefaultAppConfigPath, caDir))
	cmd.Flags().StringVar(&f.CACertPath, "repo-server-ca-cert-path", "", "file of the CA certificates the repo server's certificate must chain to (verifies it without --repo-server-strict-tls)")
	cmd.Flags().StringVar(&f.ClientCertPath, "repo-server-client-cert-path", AppConfigDir(repoMTLSDir+"/client.crt"),
		"certificate shown to a repo server that asks for one (mutual TLS); none when the file does not exist")
	cmd.Flags().StringVar(&f.ClientKeyPath, "repo-server-client-cert-key-path", AppConfigDir(repoMTLSDir+"/client.key"), "key of --repo-server-client-cert-path")
	cmd.Flags().IntVar(&f.TimeoutSeconds, "repo-server-timeout-seconds", int(reposerver.DefaultCallTimeout/time.Second), "seconds each call to the repo server may take (0: no limit)")
}

// repoMTLSDir is where Argo CD's install mounts the repo server's mutual
// TLS certificates, under the configuration path.
const repoMTLSDir = "reposerver/mtls"

// RepoServerClientCAPath is the repo server's default --client-ca-path.
func RepoServerClientCAPath() string { return AppConfigDir(repoMTLSDir + "/client-ca.crt") }

// Dial connects to the repo server.
func (f *RepoClientFlags) Dial() (*reposerver.Client, error) {
	return reposerver.Dial(f.Addr, reposerver.ClientTLS{Plaintext: f.Plaintext, Strict: f.Strict, CADir: AppConfigDir(f.CADir),
		CACertPath: f.CACertPath, ClientCertPath: f.ClientCertPath, ClientKeyPath: f.ClientKeyPath},
		reposerver.WithCallTimeout(time.Duration(f.TimeoutSeconds)*time.Second))
}
