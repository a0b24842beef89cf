package cmdutil

import (
	"context"
	"log/slog"
	"os"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/repo"
	"github.com/capstan-cd/capstan/internal/server"
	"github.com/capstan-cd/capstan/internal/settings"
)

// CoreServer is the API server the CLI runs on this machine, for --core
// and admin dashboard: headless (the kubeconfig's rights, no login) on
// the install in namespace ns, rendering sources itself into a temporary
// directory that cleanup removes.
func CoreServer(ctx context.Context, cfg *rest.Config, ns string) (srv *server.Server, cleanup func(), err error) {
	cleanup = func() {}
	c, err := kube.NewClient(cfg)
	if err != nil {
		return nil, cleanup, err
	}
	renderer, cleanup, err := LocalRenderer(c, ns)
	if err != nil {
		return nil, cleanup, err
	}
	srv, err = server.New(ctx, server.Options{Client: c, Config: cfg, Namespace: ns, Renderer: renderer, Insecure: true, Headless: true,
		Log:           slog.New(slog.DiscardHandler),
		AppSetPreview: AppSetPreview(renderer, c, ns, applicationset.SCMPolicy{})})
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return srv, cleanup, nil
}

// LocalRenderer renders sources in this process, with the repository
// credentials of the install in namespace ns, into a temporary directory
// that cleanup removes.
func LocalRenderer(c client.Reader, ns string) (renderer *repo.Service, cleanup func(), err error) {
	cache, err := os.MkdirTemp("", "capstan-core-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup = func() { _ = os.RemoveAll(cache) }
	return repo.NewService(repo.Options{Root: cache, Credentials: &settings.RepoCredentials{Reader: c, Namespace: ns}}), cleanup, nil
}
