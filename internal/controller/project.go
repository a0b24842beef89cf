package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/cluster"
	"github.com/capstan-cd/capstan/internal/project"
)

// checkProject returns the Application's AppProject, or why the project
// does not allow the Application to deploy to dst.
func (r *reconciler) checkProject(ctx context.Context, app *v1alpha1.Application, dst *cluster.Cluster) (*v1alpha1.AppProject, error) {
	proj := &v1alpha1.AppProject{}
	name := app.Spec.Project
	if name == "" {
		name = v1alpha1.DefaultAppProjectName
	}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: name}, proj); err != nil {
		return nil, fmt.Errorf("application references project %s which does not exist", name)
	}
	dest := project.Destination{Server: dst.Server, Name: dst.Name, Namespace: app.Spec.Destination.Namespace}
	if err := project.CheckApplication(proj, app, r.opts.Namespace, dest); err != nil {
		return nil, err
	}
	return proj, nil
}
