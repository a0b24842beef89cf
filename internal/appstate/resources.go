package appstate

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/engine"
)

// PatchResource patches a live object of the Application's tree, acting
// as its syncs do (sync impersonation), and returns it as patched, Secret
// values masked. A failed Secret patch does not say why: the reason could
// quote the Secret.
func (r *Reader) PatchResource(ctx context.Context, app *v1alpha1.Application, ref ResourceRef, patchType types.PatchType, patch []byte) (*unstructured.Unstructured, error) {
	live, d, err := r.live(ctx, app, ref)
	if err != nil {
		return nil, err
	}
	ri, err := r.actingResource(ctx, app, d, live.GroupVersionKind(), live.GetNamespace())
	if err != nil {
		return nil, err
	}
	out, err := ri.Patch(ctx, live.GetName(), patchType, patch, metav1.PatchOptions{FieldManager: engine.FieldManager})
	if err != nil {
		if live.GetKind() == "Secret" && live.GroupVersionKind().Group == "" {
			return nil, fmt.Errorf("failed to patch Secret %s/%s", live.GetNamespace(), live.GetName())
		}
		return nil, fmt.Errorf("error patching resource: %w", err)
	}
	masked, _ := r.Masker(ctx).Mask(out, nil)
	return masked, nil
}

// DeleteResource deletes a live object of the Application's tree, acting
// as its syncs do.
func (r *Reader) DeleteResource(ctx context.Context, app *v1alpha1.Application, ref ResourceRef, opts metav1.DeleteOptions) error {
	live, d, err := r.live(ctx, app, ref)
	if err != nil {
		return err
	}
	ri, err := r.actingResource(ctx, app, d, live.GroupVersionKind(), live.GetNamespace())
	if err != nil {
		return err
	}
	if err := ri.Delete(ctx, live.GetName(), opts); err != nil {
		return fmt.Errorf("deleting %s: %w", engine.KeyOf(live).Ref(), err)
	}
	return nil
}
