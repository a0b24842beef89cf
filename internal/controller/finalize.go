package controller

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
	"github.com/capstan-cd/capstan/internal/engine/apply"
	"github.com/capstan-cd/capstan/internal/kube"
	"github.com/capstan-cd/capstan/internal/project"
)

// The finalizers that make deleting an Application delete its resources.
const (
	resourcesFinalizer           = v1alpha1.ResourcesFinalizerName
	resourcesFinalizerBackground = v1alpha1.ResourcesFinalizerName + "/background"
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
	dest, err := r.dests.Get(c)
	if err != nil {
		return err
	}
	// Every tracked object of the status's kinds: from the watch cache,
	// and read one by one for a kind the controller may not list
	// (resource.respectRBAC). A kind gone took its objects with it.
	tracked, err := dest.Watched().Tracked(ctx, r.appKey(app), nil, app.Status.Resources)
	if err != nil {
		return err
	}
	managed := slices.SortedFunc(maps.Values(tracked), func(a, b *unstructured.Unstructured) int {
		return strings.Compare(engine.KeyOf(a).String(), engine.KeyOf(b).String())
	})
	deleter, err := r.deletionClient(ctx, app, dest)
	if err != nil {
		return err
	}
	propagation := metav1.DeletePropagationForeground
	if bg {
		propagation = metav1.DeletePropagationBackground
	}
	remaining := 0
	var awaiting []string
	for _, obj := range managed {
		own, err := apply.ParseOptions(obj.GetAnnotations()[v1alpha1.AnnotationSyncOptions])
		if err == nil && own.Delete != nil && !*own.Delete {
			continue // Delete=false: left in place, as Argo CD does
		}
		if err == nil && own.DeleteConfirm && !deletionApproved(app, app.DeletionTimestamp.Time) {
			awaiting = append(awaiting, kube.Ref(obj)) // Delete=confirm: kept until the user approves
			continue
		}
		remaining++
		if err := deleteObject(ctx, dest, deleter, obj, propagation); err != nil {
			return err
		}
	}
	if len(awaiting) > 0 {
		return fmt.Errorf("waiting for deletion confirmation of %s (Application/%s/%s)", strings.Join(awaiting, ", "), app.Namespace, app.Name)
	}
	if remaining > 0 {
		return fmt.Errorf("waiting for %d resources of Application/%s/%s to be deleted", remaining, app.Namespace, app.Name)
	}
	orig := app.DeepCopy()
	controllerutil.RemoveFinalizer(app, resourcesFinalizer)
	controllerutil.RemoveFinalizer(app, resourcesFinalizerBackground)
	return r.client.Patch(ctx, app, client.MergeFrom(orig))
}

// deletionClient is the client deleting app's resources acts through: the
// one its syncs act through (see actingClient). A project deleted before
// the Application leaves no service account to act as.
func (r *reconciler) deletionClient(ctx context.Context, app *v1alpha1.Application, dest *engine.Destination) (dynamic.Interface, error) {
	proj, err := project.Load(ctx, r.client, r.opts.Namespace, cmp.Or(app.Spec.Project, v1alpha1.DefaultAppProjectName))
	if apierrors.IsNotFound(err) {
		proj, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.actingClient(ctx, app, proj, dest)
}

func deleteObject(ctx context.Context, dest *engine.Destination, c dynamic.Interface, obj *unstructured.Unstructured, propagation metav1.DeletionPropagation) error {
	ri, _, err := dest.ResourceWith(c, obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	err = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &propagation})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", kube.Ref(obj), err)
	}
	return nil
}
