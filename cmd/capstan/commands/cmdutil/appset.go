package cmdutil

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
	"github.com/capstan-cd/capstan/internal/repo"
)

// AppSetPreview is the API server's ApplicationSet Generate: the
// ApplicationSet controller's generators run in the API server's process,
// reading Git through its repo server and cluster Secrets through its
// client, as Argo CD's API server runs them.
func AppSetPreview(git repo.GitLister, reader client.Reader, namespace string) func(context.Context, *v1alpha1.ApplicationSet) ([]*v1alpha1.Application, error) {
	return applicationset.Previewer{Sources: applicationset.Sources{Git: git, Reader: reader, Namespace: namespace}}.Preview
}
