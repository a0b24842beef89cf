// Package csa computes kubectl's client-side apply: the object with its
// last-applied-configuration annotation, and the three-way patch from the
// live object to it. The applier sends it for ServerSideApply=false, and
// the differ sends it as a dry run to predict what that apply does.
package csa

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
)

// LastAppliedAnnotation holds what a client-side apply last applied, as
// kubectl names it: the base of the next apply's three-way merge.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// WithLastApplied is obj with the last-applied annotation holding obj.
func WithLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	ann := out.GetAnnotations()
	delete(ann, LastAppliedAnnotation)
	out.SetAnnotations(ann)
	data, err := json.Marshal(out.Object)
	if err != nil {
		return nil, err
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[LastAppliedAnnotation] = string(data)
	out.SetAnnotations(ann)
	return out, nil
}

// Patch is the patch from cur to modified given the last applied
// configuration cur records, and its type: fields dropped from modified
// since are removed, fields others set are kept. Built-in kinds merge
// lists by their keys (a strategic merge patch), other kinds take JSON
// merge semantics.
func Patch(modified, cur *unstructured.Unstructured) ([]byte, types.PatchType, error) {
	original := []byte(cur.GetAnnotations()[LastAppliedAnnotation])
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
