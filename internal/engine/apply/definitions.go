package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-cd/capstan/api/v1alpha1"
)

// definitionWait bounds how long a custom resource waits for its kind to
// be served: its CRD applied earlier in the sync, or, with
// SkipDryRunOnMissingResource, installed by someone else.
const definitionWait = time.Minute

// resourceOf is resource, waiting up to definitionWait for a kind the
// cluster does not serve yet when the sync defines it or the object's
// options ask to; otherwise an unknown kind fails at once, with Argo CD's
// message.
func (a *Applier) resourceOf(ctx context.Context, req *Request, t *Task, obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	ri, err := a.resource(obj, req.Namespace)
	if err == nil || !meta.IsNoMatchError(err) {
		return ri, err
	}
	if !req.Options.SkipDryRunOnMissingResource && !t.Options.SkipDryRunOnMissingResource && !req.Plan.defines(obj.GroupVersionKind().GroupKind()) {
		return nil, missingKind(obj)
	}
	if req.DryRun {
		return nil, errNotServedYet // a dry run installs no definition to wait for
	}
	deadline := time.Now().Add(definitionWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(a.PollInterval):
		}
		if ri, err = a.resource(obj, req.Namespace); err == nil || !meta.IsNoMatchError(err) {
			return ri, err
		}
	}
	return nil, fmt.Errorf("%w (waited %s)", missingKind(obj), definitionWait)
}

// errNotServedYet is a dry run's answer for a custom resource whose kind
// the sync itself (or someone else) is to define: it is not checked.
var errNotServedYet = errors.New("dry run skipped: the kind is not served yet")

// missingKind says that the cluster does not serve obj's kind, as Argo CD
// says it.
func missingKind(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	return fmt.Errorf("the Kubernetes API could not find %s/%s for requested resource %s/%s. Make sure the %q CRD is installed on the destination cluster",
		gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName(), gvk.Kind)
}

// defines reports whether the plan applies the CustomResourceDefinition
// of kind gk.
func (p *Plan) defines(gk schema.GroupKind) bool {
	for _, tasks := range p.Phases {
		for _, t := range tasks {
			if defines(t.Obj, gk) {
				return true
			}
		}
	}
	return false
}

// AwaitsDefinition reports whether a sync of obj, whose kind the cluster
// does not serve, waits for its definition rather than fail: desired (the
// objects synced with it) holds its CustomResourceDefinition, or its own
// sync options say SkipDryRunOnMissingResource.
func AwaitsDefinition(obj *unstructured.Unstructured, desired []*unstructured.Unstructured) bool {
	if own, err := ParseOptions(obj.GetAnnotations()[v1alpha1.AnnotationSyncOptions]); err == nil && own.SkipDryRunOnMissingResource {
		return true
	}
	gk := obj.GroupVersionKind().GroupKind()
	for _, d := range desired {
		if defines(d, gk) {
			return true
		}
	}
	return false
}

// defines reports whether obj is the CustomResourceDefinition of kind gk.
func defines(obj *unstructured.Unstructured, gk schema.GroupKind) bool {
	if obj.GetKind() != "CustomResourceDefinition" || obj.GroupVersionKind().Group != "apiextensions.k8s.io" {
		return false
	}
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	return group == gk.Group && kind == gk.Kind
}
