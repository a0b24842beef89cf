package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// The finalizers that make deleting an Application delete its resources.
const (
	resourcesFinalizer           = "resources-finalizer.argocd.argoproj.io"
	resourcesFinalizerBackground = "resources-finalizer.argocd.argoproj.io/background"
)

// finalize deletes the resources of an Application being deleted, when it
// has the resources finalizer, then lets the deletion finish.
func (r *reconciler) finalize(ctx context.Context, app *v1alpha1.Application) error {
	fg, bg := controllerutil.ContainsFinalizer(app, resourcesFinalizer), controllerutil.ContainsFinalizer(app, resourcesFinalizerBackground)
	if !fg && !bg {
		return nil
	}
	c, err := r.clusters.Get(ctx, app.Spec.Destination)
	if err != nil {
		return err
	}
	dest, err := r.dests.get(c)
	if err != nil {
		return err
	}
	for _, rs := range app.Status.Resources {
		if err := dest.cache.Watch(ctx, groupVersionKind(rs)); err != nil {
			continue // the kind is gone, and its objects with it
		}
	}
	propagation := metav1.DeletePropagationForeground
	if bg {
		propagation = metav1.DeletePropagationBackground
	}
	remaining := 0
	for _, obj := range dest.cache.ManagedBy(r.appKey(app)) {
		remaining++
		if err := deleteObject(ctx, dest, obj, propagation); err != nil {
			return err
		}
	}
	if remaining > 0 {
		return fmt.Errorf("waiting for %d resources of Application/%s/%s to be deleted", remaining, app.Namespace, app.Name)
	}
	orig := app.DeepCopy()
	controllerutil.RemoveFinalizer(app, resourcesFinalizer)
	controllerutil.RemoveFinalizer(app, resourcesFinalizerBackground)
	return r.client.Patch(ctx, app, client.MergeFrom(orig))
}

func deleteObject(ctx context.Context, dest *destination, obj *unstructured.Unstructured, propagation metav1.DeletionPropagation) error {
	m, err := dest.cache.Mapping(obj.GroupVersionKind())
	if err != nil {
		return err
	}
	ri := dest.client.Resource(m.Resource)
	var err2 error
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		err2 = ri.Namespace(obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &propagation})
	} else {
		err2 = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &propagation})
	}
	if err2 != nil && !apierrors.IsNotFound(err2) {
		return fmt.Errorf("deleting %s/%s: %w", obj.GetKind(), obj.GetName(), err2)
	}
	return nil
}
