package crds_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-cd/capstan/internal/testing/toolbin"
	"github.com/capstan-cd/capstan/manifests/crds"
)

// argoCDCRDs reads Argo CD's CRDs from the release `make argocd-manifests`
// fetched, by name.
func argoCDCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	dir := toolbin.Find(t, "CAPSTAN_ARGOCD_MANIFESTS", "bin/argocd-manifests", "argocd-manifests")
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, file := range []string{"application-crd.yaml", "applicationset-crd.yaml", "appproject-crd.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, "crds", file))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out[crd.Name] = crd
	}
	// Argo CD Image Updater's ImageUpdater, from the release
	// `make image-updater-manifests` fetched.
	iu := toolbin.Find(t, "CAPSTAN_IMAGE_UPDATER_MANIFESTS", "bin/image-updater-manifests", "image-updater-manifests")
	data, err := os.ReadFile(filepath.Join(iu, "crds", "argocd-image-updater.argoproj.io_imageupdaters.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatalf("Image Updater's CRD: %v", err)
	}
	out[crd.Name] = crd
	return out
}

// TestSupersetOfArgoCDCRDs checks Capstan's CRDs against Argo CD's (and
// Argo CD Image Updater's ImageUpdater), field for field: every property Argo CD declares exists with the same type and
// the same treatment of unknown fields, Capstan requires nothing Argo CD
// does not, and names, scope and subresources agree. So an object Argo CD
// accepts is stored by Capstan's CRDs unchanged, and the reverse holds for
// every field Argo CD knows.
func TestSupersetOfArgoCDCRDs(t *testing.T) {
	theirs := argoCDCRDs(t)
	ours, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, our := range ours {
		their, ok := theirs[our.Name]
		if !ok {
			t.Errorf("Argo CD has no CRD %s", our.Name)
			continue
		}
		t.Run(our.Name, func(t *testing.T) { compareCRD(t, our, their) })
	}
}

func compareCRD(t *testing.T, our, their *apiextensionsv1.CustomResourceDefinition) {
	if our.Spec.Scope != their.Spec.Scope || our.Spec.Group != their.Spec.Group {
		t.Errorf("scope/group %s/%s, Argo CD's %s/%s", our.Spec.Scope, our.Spec.Group, their.Spec.Scope, their.Spec.Group)
	}
	on, tn := our.Spec.Names, their.Spec.Names
	if on.Kind != tn.Kind || on.Plural != tn.Plural || on.Singular != tn.Singular ||
		!reflect.DeepEqual(on.ShortNames, tn.ShortNames) || !containsAll(on.Categories, tn.Categories) {
		t.Errorf("names %+v, Argo CD's %+v", on, tn)
	}
	if len(our.Spec.Versions) != 1 || len(their.Spec.Versions) != 1 {
		t.Fatalf("versions: %d, Argo CD's %d", len(our.Spec.Versions), len(their.Spec.Versions))
	}
	ov, tv := our.Spec.Versions[0], their.Spec.Versions[0]
	if ov.Name != tv.Name || ov.Served != tv.Served || ov.Storage != tv.Storage {
		t.Errorf("version %s served=%v storage=%v, Argo CD's %s %v %v", ov.Name, ov.Served, ov.Storage, tv.Name, tv.Served, tv.Storage)
	}
	if hasStatus(ov.Subresources) != hasStatus(tv.Subresources) {
		t.Errorf("status subresource %v, Argo CD's %v", hasStatus(ov.Subresources), hasStatus(tv.Subresources))
	}
	compareSchema(t, "", ov.Schema.OpenAPIV3Schema, tv.Schema.OpenAPIV3Schema)
}

func containsAll(ours, theirs []string) bool {
	for _, s := range theirs {
		if !slices.Contains(ours, s) {
			return false
		}
	}
	return true
}

func hasStatus(s *apiextensionsv1.CustomResourceSubresources) bool {
	return s != nil && s.Status != nil
}

// compareSchema walks Argo CD's schema their and reports what ours lacks or
// treats differently at path.
func compareSchema(t *testing.T, path string, ours, theirs *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	if ours == nil {
		t.Errorf("%s: missing", path)
		return
	}
	if ours.Type != theirs.Type {
		t.Errorf("%s: type %q, Argo CD's %q", path, ours.Type, theirs.Type)
	}
	if boolOf(ours.XPreserveUnknownFields) != boolOf(theirs.XPreserveUnknownFields) {
		t.Errorf("%s: x-kubernetes-preserve-unknown-fields %v, Argo CD's %v", path,
			boolOf(ours.XPreserveUnknownFields), boolOf(theirs.XPreserveUnknownFields))
	}
	if ours.Pattern != "" && ours.Pattern != theirs.Pattern { // none is laxer, so fine
		t.Errorf("%s: pattern %q, Argo CD's %q", path, ours.Pattern, theirs.Pattern)
	}
	if !reflect.DeepEqual(ours.Default, theirs.Default) {
		t.Errorf("%s: default %s, Argo CD's %s", path, rawOf(ours.Default), rawOf(theirs.Default))
	}
	if !rulesWithin(ours.XValidations, theirs.XValidations) {
		t.Errorf("%s: validation rules %v, Argo CD's %v", path, ours.XValidations, theirs.XValidations)
	}
	if ours.XIntOrString != theirs.XIntOrString {
		t.Errorf("%s: x-kubernetes-int-or-string %v, Argo CD's %v", path, ours.XIntOrString, theirs.XIntOrString)
	}
	for _, r := range ours.Required {
		if !slices.Contains(theirs.Required, r) {
			t.Errorf("%s: requires %q, Argo CD does not", path, r)
		}
	}
	for name, their := range theirs.Properties {
		our, ok := ours.Properties[name]
		if !ok {
			t.Errorf("%s.%s: missing", path, name)
			continue
		}
		compareSchema(t, path+"."+name, &our, &their)
	}
	if theirs.Items != nil && theirs.Items.Schema != nil {
		var our *apiextensionsv1.JSONSchemaProps
		if ours.Items != nil {
			our = ours.Items.Schema
		}
		compareSchema(t, path+"[]", our, theirs.Items.Schema)
	}
	if theirs.AdditionalProperties != nil && theirs.AdditionalProperties.Schema != nil {
		var our *apiextensionsv1.JSONSchemaProps
		if ours.AdditionalProperties != nil {
			our = ours.AdditionalProperties.Schema
		}
		compareSchema(t, path+"{}", our, theirs.AdditionalProperties.Schema)
	}
}

func boolOf(b *bool) bool { return b != nil && *b }

func rawOf(j *apiextensionsv1.JSON) string {
	if j == nil {
		return "none"
	}
	return string(j.Raw)
}

// rulesWithin: every CEL rule of ours is one of theirs, so ours refuses
// nothing theirs accepts.
func rulesWithin(ours, theirs apiextensionsv1.ValidationRules) bool {
	for _, o := range ours {
		if !slices.ContainsFunc(theirs, func(r apiextensionsv1.ValidationRule) bool { return r.Rule == o.Rule }) {
			return false
		}
	}
	return true
}
