// Package testobj writes the objects tests start from into a real API
// server.
package testobj

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Put makes obj what the API server holds: it creates obj, or replaces
// the object of its name when one is there already (Capstan's API server
// creates the install's ConfigMaps empty at start, so a test's argocd-cm
// may find one waiting).
func Put(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	live := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return err
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("replacing %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
