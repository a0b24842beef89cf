package component

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/cmd/capstan/commands/cmdutil"
	"github.com/capstan-cd/capstan/internal/certs"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/settings"
)

// dexTLSDir is where argocd-dex-server-tls is mounted into the Dex
// server, under the configuration path.
const dexTLSDir = "dex/tls"

// dexPoll is how often rundex reads argocd-cm and argocd-secret for a
// changed Dex configuration.
const dexPoll = 3 * time.Second

func newDexCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "dex", Short: "Run Dex, the identity broker of argocd-cm's dex.config (the argocd-dex-server workload)"}
	var namespace, dexBin, address string
	var disableTLS bool
	lf := &logFlags{}
	rundex := &cobra.Command{
		Use:     "rundex",
		Short:   "Run Dex with the configuration made from argocd-cm's dex.config, restarting it when that changes",
		Example: "  argocd-dex rundex   # as the argocd-dex-server Deployment runs it",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg, err := ctrlconfig.GetConfig()
			if err != nil {
				return err
			}
			c, err := kube.NewClient(cfg)
			if err != nil {
				return err
			}
			log, err := lf.logger()
			if err != nil {
				return err
			}
			return runDex(ctx, log, c, namespace, dexBin, address, disableTLS)
		},
	}
	rundex.Flags().StringVar(&namespace, "namespace", "argocd", "namespace of argocd-cm and argocd-secret")
	rundex.Flags().StringVar(&dexBin, "dex-binary", "dex", "the Dex program (looked up in PATH)")
	rundex.Flags().StringVar(&address, "address", "0.0.0.0", "host Dex listens on, with Argo CD's ports: web 5556, gRPC 5557, telemetry 5558")
	rundex.Flags().BoolVar(&disableTLS, "disable-tls", false,
		"serve Dex over plain HTTP; by default over HTTPS with argocd-dex-server-tls as mounted under "+filepath.Join(cmdutil.DefaultAppConfigPath, dexTLSDir)+", or a self-signed certificate")
	lf.add(rundex)
	bindEnv(rundex, map[string]string{"disable-tls": "ARGOCD_DEX_SERVER_DISABLE_TLS",
		"loglevel": "ARGOCD_DEX_SERVER_LOGLEVEL", "logformat": "ARGOCD_DEX_SERVER_LOGFORMAT"})
	acceptEnv(rundex, "DEX_CONTINUE_ON_CONNECTOR_FAILURE")
	cmd.AddCommand(rundex)
	return cmd
}

// runDex keeps Dex running with the configuration argocd-cm asks for,
// restarting it when that changes, until ctx ends. Without a dex.config
// it waits for one.
func runDex(ctx context.Context, log *slog.Logger, c client.Reader, namespace, dexBin, address string, disableTLS bool) error {
	dir, err := os.MkdirTemp("", "dex-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	serve, err := dexServe(log, dir, namespace, disableTLS)
	if err != nil {
		return err
	}
	serve.Address = address
	var current []byte
	var lastErr string // logged once, not at every look
	var dex *exec.Cmd
	exited := make(chan error, 1)
	stopDex := func() {
		if dex != nil {
			_ = dex.Process.Signal(syscall.SIGTERM)
			<-exited
			dex = nil
		}
	}
	defer stopDex()
	tick := time.NewTicker(dexPoll)
	defer tick.Stop()
	for {
		config, err := settings.DexConfig(ctx, c, namespace, serve)
		switch {
		case err != nil:
			if err.Error() != lastErr {
				log.Error("Dex configuration", "error", err.Error())
			}
			lastErr = err.Error()
		case !bytes.Equal(config, current):
			lastErr = ""
			stopDex()
			current = config
			if config == nil {
				log.Info("Dex is not configured: argocd-cm has no url or no dex.config")
				break
			}
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, config, 0o600); err != nil {
				return err
			}
			dex = exec.CommandContext(ctx, dexBin, "serve", path)
			dex.Stdout, dex.Stderr = os.Stdout, os.Stderr
			if err := dex.Start(); err != nil {
				return fmt.Errorf("starting Dex (%s): %w", dexBin, err)
			}
			log.Info("Dex started with the configuration of argocd-cm", "pid", dex.Process.Pid)
			go func(cmd *exec.Cmd) { exited <- cmd.Wait() }(dex)
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-exited:
			dex = nil
			current = nil // started again at the next look
			log.Error("Dex exited", "error", fmt.Sprint(err))
		case <-tick.C:
		}
	}
}

// dexServe writes the certificate Dex serves HTTPS with into dir: the
// mounted argocd-dex-server-tls, or a self-signed one.
func dexServe(log *slog.Logger, dir, namespace string, disableTLS bool) (settings.DexServe, error) {
	if disableTLS {
		return settings.DexServe{}, nil
	}
	tlsDir := cmdutil.AppConfigDir(dexTLSDir)
	hosts := []string{"localhost", "argocd-dex-server", "argocd-dex-server." + namespace + ".svc"}
	certPEM, keyPEM, generated, err := certs.LoadPEM(tlsDir, "argocd-dex-server", hosts)
	if err != nil {
		return settings.DexServe{}, fmt.Errorf("dex certificate: %w", err)
	}
	if generated {
		log.Info("No certificate in "+tlsDir+": Dex serves with a self-signed one", "hosts", hosts)
	}
	serve := settings.DexServe{TLSCert: filepath.Join(dir, "tls.crt"), TLSKey: filepath.Join(dir, "tls.key")}
	return serve, errors.Join(os.WriteFile(serve.TLSCert, certPEM, 0o600), os.WriteFile(serve.TLSKey, keyPEM, 0o600))
}
