package settings

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// EnsureDefaultProject creates the default AppProject, which allows
// everything, when it is missing, as Argo CD's controller and API server
// both do on start. An existing one is left as it is.
func EnsureDefaultProject(ctx context.Context, c client.Client, namespace string) error {
	p := &v1alpha1.AppProject{}
	p.Namespace, p.Name = namespace, v1alpha1.DefaultAppProjectName
	p.Spec = v1alpha1.AppProjectSpec{
		SourceRepos:              []string{"*"},
		Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		ClusterResourceWhitelist: []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}},
	}
	if err := c.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the default AppProject in %s: %w", namespace, err)
	}
	return nil
}
