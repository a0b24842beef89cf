package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
)

// The client-side apply field manager whose fields a sync takes over, as
// Argo CD names it, and the annotation that names another.
const (
	defaultCSAManager      = "kubectl-client-side-apply"
	AnnotationCSAMigration = "argocd.argoproj.io/client-side-apply-migration-manager"
)

// migrateClientSideApply hands the fields a client-side apply manager
// owns on live (as the apply just returned it) to the Applier's field
// manager, then applies again, so that fields removed from Git are
// removed from the object: a server-side apply alone leaves the other
// manager's fields in place. It returns the object after, or live
// untouched when no such manager owns fields.
func (a *Applier) migrateClientSideApply(ctx context.Context, ri dynamic.ResourceInterface, obj, live *unstructured.Unstructured,
	apply func() (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	manager := defaultCSAManager
	if m := obj.GetAnnotations()[AnnotationCSAMigration]; m != "" {
		manager = m
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(manager), a.FieldManager)
	if err != nil || patch == nil {
		return live, err
	}
	if _, err := ri.Patch(ctx, obj.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return nil, fmt.Errorf("taking over the fields of %s: %w", manager, err)
	}
	return apply()
}
