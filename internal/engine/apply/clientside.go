package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/internal/engine/csa"
)

// clientSideApply applies obj as kubectl apply does, for ServerSideApply=false:
// it records obj in the last-applied annotation and patches the live object
// with a three-way merge of the last applied configuration, obj and the
// live object, so fields dropped from obj since are removed and fields
// others set are kept. Built-in kinds merge lists by their keys (a
// strategic merge patch), other kinds take JSON merge semantics.
func (a *Applier) clientSideApply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, dryRun []string, validation string) (*unstructured.Unstructured, error) {
	modified, err := csa.WithLastApplied(obj)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ri.Create(ctx, &unstructured.Unstructured{Object: modified.Object}, metav1.CreateOptions{
				FieldManager: a.FieldManager, DryRun: dryRun, FieldValidation: validation})
		}
		if err != nil {
			return nil, err
		}
		patch, kind, err := csa.Patch(modified, cur)
		if err != nil {
			return nil, fmt.Errorf("computing the client-side apply patch: %w", err)
		}
		out, err := ri.Patch(ctx, obj.GetName(), kind, patch, metav1.PatchOptions{
			FieldManager: a.FieldManager, DryRun: dryRun, FieldValidation: validation})
		if apierrors.IsConflict(err) && attempt < 3 {
			continue // changed between the read and the write
		}
		return out, err
	}
}
