package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
)

// lastAppliedAnnotation holds what a client-side apply last applied, as
// kubectl names it: the base of the next apply's three-way merge.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// clientSideApply applies obj as kubectl apply does, for ServerSideApply=false:
// it records obj in the last-applied annotation and patches the live object
// with a three-way merge of the last applied configuration, obj and the
// live object, so fields dropped from obj since are removed and fields
// others set are kept. Built-in kinds merge lists by their keys (a
// strategic merge patch), other kinds take JSON merge semantics.
func (a *Applier) clientSideApply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, dryRun []string, validation string) (*unstructured.Unstructured, error) {
	modified, err := withLastApplied(obj)
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
		patch, kind, err := threeWayPatch(modified, cur)
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

// withLastApplied is obj with the last-applied annotation holding obj.
func withLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	ann := out.GetAnnotations()
	delete(ann, lastAppliedAnnotation)
	out.SetAnnotations(ann)
	data, err := json.Marshal(out.Object)
	if err != nil {
		return nil, err
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[lastAppliedAnnotation] = string(data)
	out.SetAnnotations(ann)
	return out, nil
}

// threeWayPatch is the patch from cur to modified given the last applied
// configuration cur records, and its type.
func threeWayPatch(modified, cur *unstructured.Unstructured) ([]byte, types.PatchType, error) {
	original := []byte(cur.GetAnnotations()[lastAppliedAnnotation])
	if len(original) == 0 {
		original = []byte("{}")
	}
	mod, err := json.Marshal(modified.Object)
	if err != nil {
		return nil, "", err
	}
	current, err := json.Marshal(cur.Object)
	if err != nil {
		return nil, "", err
	}
	if typed, err := scheme.Scheme.New(modified.GroupVersionKind()); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return nil, "", err
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, mod, current, meta, true)
		return patch, types.StrategicMergePatchType, err
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, mod, current, mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"), mergepatch.RequireMetadataKeyUnchanged("name"))
	return patch, types.MergePatchType, err
}
