package commands

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-cd/capstan/internal/apiclient"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/settings"
)

// With --core the CLI needs no API server, as Argo CD's: it runs one of
// its own in this process, headless (no login, nothing written to the
// install's settings), on a loopback port, reaching the install through
// the kubeconfig (--kube-context; the install is in the context's
// namespace) and rendering sources itself. Every command then works as it
// does against a server, with the kubeconfig user's rights.

// coreServer starts the headless API server once and returns how to
// reach it; release stops it.
func (f *clientFlags) coreServer() (apiclient.Server, error) {
	f.coreOnce.Do(func() { f.coreAddr, f.coreStop, f.coreErr = startCore(f.kubeContext) })
	if f.coreErr != nil {
		return apiclient.Server{}, f.coreErr
	}
	return apiclient.Server{Server: f.coreAddr, PlainText: true}, nil
}

// coreClient is a client of --core's server.
func (f *clientFlags) coreClient() (*apiclient.Client, error) {
	s, err := f.coreServer()
	if err != nil {
		return nil, err
	}
	return apiclient.Connect(s, "", f.conn)
}

// release stops what the commands started: --core's server and its
// render cache.
func (f *clientFlags) release() {
	if f.coreStop != nil {
		f.coreStop()
	}
}

// startCore serves the API of the install kubeContext names (empty: the
// current context) on a loopback port; stop ends it and removes its
// render cache.
func startCore(kubeContext string) (addr string, stop func(), err error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(),
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return "", nil, fmt.Errorf("--core reads the kubeconfig: %w", err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return "", nil, fmt.Errorf("--core reads the kubeconfig: %w", err)
	}
	c, err := kube.NewClient(cfg)
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cache, err := os.MkdirTemp("", "capstan-core-")
	if err != nil {
		cancel()
		return "", nil, err
	}
	stop = func() { cancel(); _ = os.RemoveAll(cache) }
	renderer := repo.NewService(repo.Options{Root: cache, Credentials: &settings.RepoCredentials{Reader: c, Namespace: ns}})
	srv, err := server.New(ctx, server.Options{Client: c, Config: cfg, Namespace: ns, Renderer: renderer, Insecure: true, Headless: true,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("--core: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop()
		return "", nil, err
	}
	go func() { _ = srv.Serve(ctx, l) }()
	return l.Addr().String(), stop, nil
}
