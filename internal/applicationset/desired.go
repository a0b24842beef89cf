package applicationset

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

var metav1TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.ApplicationKind}

// postDeleteFinalizerPrefix marks the finalizers of Argo CD's post-delete
// hooks, which an Application keeps while they run.
const postDeleteFinalizerPrefix = "post-delete-finalizer.argocd.argoproj.io"

// Desired renders the Applications the generator results describe, in
// the ApplicationSet's namespace, owned by it and — unless
// preserveResourcesOnDeletion is set — with the resources finalizer, so
// that deleting one deletes what it deployed.
func Desired(as *v1alpha1.ApplicationSet, results []Result) ([]*v1alpha1.Application, error) {
	r := rendererOf(as)
	seen := map[string]bool{}
	var out []*v1alpha1.Application
	for _, res := range results {
		for _, p := range res.Params {
			app, err := r.application(res.Template, as.Spec.TemplatePatch, p)
			if err != nil {
				return nil, err
			}
			if app.Name == "" {
				return nil, fmt.Errorf("a generated Application has no name: the template's metadata.name is empty for parameters %v", p.flatten())
			}
			if seen[app.Name] {
				return nil, fmt.Errorf("ApplicationSet %s contains applications with duplicate name: %s", as.Name, app.Name)
			}
			seen[app.Name] = true
			app.Namespace = as.Namespace
			if !preserveResources(as) && !hasResourcesFinalizer(app.Finalizers) {
				app.Finalizers = append(app.Finalizers, v1alpha1.ResourcesFinalizerName)
			}
			app.OwnerReferences = []metav1.OwnerReference{ownerRef(as)}
			out = append(out, app)
		}
	}
	return out, nil
}

func preserveResources(as *v1alpha1.ApplicationSet) bool {
	return as.Spec.SyncPolicy != nil && as.Spec.SyncPolicy.PreserveResourcesOnDeletion
}

func hasResourcesFinalizer(finalizers []string) bool {
	for _, f := range finalizers {
		if f == v1alpha1.ResourcesFinalizerName || strings.HasPrefix(f, v1alpha1.ResourcesFinalizerName+"/") {
			return true
		}
	}
	return false
}

// ownerRef is the controller reference generated Applications carry.
func ownerRef(as *v1alpha1.ApplicationSet) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.ApplicationSetKind,
		Name: as.Name, UID: as.UID, Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// controllerOf returns the controller owner reference of obj, if any.
func controllerOf(obj metav1.Object) *metav1.OwnerReference {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return &ref
		}
	}
	return nil
}

// Previewer renders the Applications an ApplicationSet would make without
// writing anything: the API's Generate (`argocd appset generate`).
type Previewer struct {
	Sources Sources
}

// Preview runs the ApplicationSet's generators and renders their
// Applications, as the controller would create them. A preview always
// reads tokens in strict mode, as Argo CD's does: whoever may preview in
// a project could otherwise send any Secret of the namespace to an API
// of their choosing while creating nothing.
func (p Previewer) Preview(ctx context.Context, as *v1alpha1.ApplicationSet) ([]*v1alpha1.Application, error) {
	src := p.Sources
	src.SCM.TokenRefStrict = true
	results, _, err := Generate(ctx, as, src)
	if err != nil {
		return nil, err
	}
	return Desired(as, results)
}
