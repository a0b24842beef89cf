package commands

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capstan-cd/capstan/internal/controller"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/repo/reposerver"
)

type controllerFlags struct {
	namespace string
	workers   int
	resync    time.Duration
	repoPoll  time.Duration
	qps       float32
	burst     int
}

func (f *controllerFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.namespace, "namespace", "argocd", "control namespace holding Applications, AppProjects and settings")
	cmd.Flags().IntVar(&f.workers, "status-processors", 20, "Applications reconciled in parallel")
	cmd.Flags().DurationVar(&f.resync, "app-resync", 120*time.Second, "periodic refresh of every Application")
	cmd.Flags().DurationVar(&f.repoPoll, "repo-poll-interval", 30*time.Second, "how often each followed repository revision is checked for new commits (once per repository, not per Application)")
	cmd.Flags().Float32Var(&f.qps, "kube-api-qps", 500, "requests per second to each Kubernetes API server")
	cmd.Flags().IntVar(&f.burst, "kube-api-burst", 1000, "request burst to each Kubernetes API server")
}

func newControllerCommand() *cobra.Command {
	f := &controllerFlags{}
	var repoServer string
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Reconcile Applications, rendering through a repo server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, err := reposerver.Dial(repoServer)
			if err != nil {
				return err
			}
			defer client.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runController(ctx, f, client)
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&repoServer, "repo-server", "argocd-repo-server:8081", "repo server address")
	return cmd
}

func runController(ctx context.Context, f *controllerFlags, r repo.Renderer) error {
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst
	return controller.Run(ctx, controller.Options{
		Config: cfg, Namespace: f.namespace, Renderer: r, Workers: f.workers, Resync: f.resync, RepoPoll: f.repoPoll,
		Log: slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	})
}

func newRunCommand() *cobra.Command {
	f := &controllerFlags{}
	var root, redisAddr, repoListen string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run every component in one process (repo server in-process)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
			svc, closeCache, err := newRepoService(ctx, f.namespace, root, redisAddr)
			if err != nil {
				return err
			}
			defer closeCache()
			g, ctx := errgroup.WithContext(ctx)
			g.Go(func() error { return runController(ctx, f, svc) })
			if repoListen != "" {
				g.Go(func() error { return serveRepo(ctx, log, repoListen, svc) })
			}
			return g.Wait()
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&root, "root", filepath.Join(os.TempDir(), "capstan"), "directory for repository clones and charts")
	cmd.Flags().StringVar(&redisAddr, "redis", "", "Redis host:port for the manifest cache (default: in memory)")
	cmd.Flags().StringVar(&repoListen, "repo-server-listen", "", "also serve the repo server over gRPC on this address")
	return cmd
}
