package appstate

import (
	"cmp"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/project"
	"github.com/capstan-cd/capstan/internal/settings"
)

// actingUser is who the API acts as on app's resources in d: the service
// account its syncs act as under sync impersonation, or "" for the
// destination's own rights, as the controller picks it.
func (r *Reader) actingUser(ctx context.Context, app *v1alpha1.Application, d *engine.Destination) (string, error) {
	cm, err := settings.LoadArgoCD(ctx, r.Client, r.Namespace)
	if err != nil {
		return "", err
	}
	if !cm.SyncImpersonationEnabled() {
		return "", nil
	}
	proj, err := project.Load(ctx, r.Client, r.Namespace, cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName))
	if err != nil {
		return "", err
	}
	return project.SyncUser(true, cm.SyncImpersonationEnforced(), app, proj, d.Cluster.Server)
}

// acting returns the client of d to change app's resources through.
func (r *Reader) acting(ctx context.Context, app *v1alpha1.Application, d *engine.Destination) (dynamic.Interface, error) {
	user, err := r.actingUser(ctx, app, d)
	if err != nil || user == "" {
		return d.Client, err
	}
	return d.As(user)
}

// actingResource is the resource interface of gvk in namespace through
// the acting client.
func (r *Reader) actingResource(ctx context.Context, app *v1alpha1.Application, d *engine.Destination, gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	c, err := r.acting(ctx, app, d)
	if err != nil {
		return nil, err
	}
	ri, _, err := d.ResourceWith(c, gvk, namespace)
	return ri, err
}

// permitCreate checks an object an action creates as a sync would: its
// namespace defaulted to the source object's, then the project's kinds and
// destinations and the cluster's own limits.
func (r *Reader) permitCreate(ctx context.Context, app *v1alpha1.Application, d *engine.Destination, source, obj *unstructured.Unstructured) error {
	m, err := d.Mapper.Mapping(obj.GroupVersionKind())
	if err != nil {
		return fmt.Errorf("creating %s: %w", engine.KeyOf(obj).Ref(), err)
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	switch {
	case !namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		obj.SetNamespace(source.GetNamespace())
	}
	if err := r.permit(ctx, app, d)(obj, namespaced); err != nil {
		return fmt.Errorf("creating %s: %w", engine.KeyOf(obj).Ref(), err)
	}
	if err := d.Manages(obj, namespaced); err != nil {
		return fmt.Errorf("creating %s: %w", engine.KeyOf(obj).Ref(), err)
	}
	return nil
}
