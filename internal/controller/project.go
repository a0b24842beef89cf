package controller

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// allowed reports whether the project permits an object and the
// destination cluster manages it: a cluster Secret that lists namespaces
// limits Capstan to them, and to no cluster-scoped objects unless it sets
// clusterResources.
func allowed(proj *v1alpha1.AppProject, c *cluster.Cluster, obj *unstructured.Unstructured, namespaced bool) error {
	if err := project.Permits(proj, obj, namespaced); err != nil {
		return err
	}
	if len(c.Namespaces) == 0 {
		return nil
	}
	if !namespaced {
		if !c.ClusterResources {
			return fmt.Errorf("cluster level %s %q can not be managed when in namespaced mode", obj.GetKind(), obj.GetName())
		}
		return nil
	}
	if !slices.Contains(c.Namespaces, obj.GetNamespace()) {
		return fmt.Errorf("namespace %q for %s %q is not managed", obj.GetNamespace(), obj.GetKind(), obj.GetName())
	}
	return nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
